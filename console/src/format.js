// Small formatters shared by the pages.
export const time = (unixSeconds) => (unixSeconds == null ? '' : new Date(unixSeconds * 1000).toLocaleString());
export const timeMs = (ms) => (ms == null ? '' : new Date(ms).toISOString().replace('T', ' ').slice(0, 23));
export const usd = (n) => (n == null ? '' : `$${Number(n).toFixed(n !== 0 && Math.abs(n) < 0.01 ? 6 : 4)}`);
export const num = (n, digits = 0) => (n == null ? '—' : Number(n).toLocaleString(undefined, { maximumFractionDigits: digits }));
export const json = (v) => JSON.stringify(v, null, 2);
export const statusClass = (s) => (s >= 500 ? 'bad' : s >= 400 ? 'warn' : s >= 200 && s < 300 ? 'good' : '');
