/**
 * What rendering a prompt costs, in-process (a micro-benchmark): a chat
 * template of 1 KB — two messages, five variables, a section over a list,
 * an inverted section and a partial — rendered with fresh variables each
 * time (src/prompts/render.ts: required variables checked, Mustache with
 * JSON-string escaping, the result parsed as the message list). The
 * template is prepared once, as the request path caches it. `npm run
 * bench` reports the figure in RESULTS.md (target: under 50 µs per render).
 *
 * Usage alone: npm run build && node dist/bench/prompt-render.js
 */
import { pathToFileURL } from 'node:url';
import { prepare, render } from '../src/prompts/render.js';

const RENDERS = 20_000;
const ROUNDS = 5;

/** A support-desk prompt of about 1 KB. */
const FILLER = 'Answer in the customer\u2019s language, cite the policy section you rely on, and never promise refunds the policy does not allow. ';
export const TEMPLATE_1KB = JSON.stringify([
  {
    role: 'system',
    content: `You are {{agent}}, a support agent for {{company}}. ${FILLER}${FILLER}${FILLER}${FILLER}{{>tone}} Known facts:{{#facts}}\n- {{title}}: {{detail}}{{/facts}}{{^facts}} none{{/facts}}`,
  },
  { role: 'user', content: `Ticket {{ticket}} from {{customer}}: {{question}} ${FILLER}${FILLER}` },
]);
const PARTIAL = 'Keep a warm, plain tone; short paragraphs; no jargon. Sign as {{agent}}.';

export interface RenderFigure {
  templateBytes: number;
  /** Median over rounds of the mean µs per render. */
  usPerRender: number;
}

export function measurePromptRender(): RenderFigure {
  const prepared = prepare(TEMPLATE_1KB, new Map([['tone', PARTIAL]]));
  if (!prepared.ok) throw new Error(prepared.error.message);
  let sink = 0;
  const rounds: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < RENDERS; i++) {
      const out = render(prepared.value, {
        agent: 'Robin',
        company: 'Switchyard "Rail" & Co',
        ticket: `T-${i}`,
        customer: 'Ann <ann@example.com>',
        question: `Where is my order #${i}?\nIt was due "yesterday".`,
        facts: [
          { title: 'order', detail: `#${i} shipped` },
          { title: 'carrier', detail: 'ParcelCo' },
        ],
      });
      if (!out.ok) throw new Error(out.error.message);
      sink += out.value.length;
    }
    // Round 0 warms the JIT up and is left out.
    if (round > 0) rounds.push(Number(process.hrtime.bigint() - started) / 1000 / RENDERS);
  }
  if (sink === 0) throw new Error('nothing rendered');
  rounds.sort((a, b) => a - b);
  return { templateBytes: Buffer.byteLength(TEMPLATE_1KB), usPerRender: rounds[Math.floor(rounds.length / 2)]! };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const f = measurePromptRender();
  console.log(`render of a ${f.templateBytes}-byte chat template: ${f.usPerRender.toFixed(2)} µs per render (median of ${ROUNDS} rounds of ${RENDERS})`);
}
