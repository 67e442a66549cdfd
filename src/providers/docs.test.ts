// docs/providers.md shows each translator's parameter policy as a table; this test holds
// the document to the code. When it fails, the message is the table as the code has it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ParamPolicy, ParamRule } from './shared/params.js';
import { loadProviders } from './registry.js';

const DOC = readFileSync(new URL('../../../docs/providers.md', import.meta.url), 'utf8');

/** The markdown table of a policy, rows in the table's order. */
function policyTable(policy: ParamPolicy): string {
  const rows = Object.entries(policy.rules).map(([param, rule]) => `| \`${param}\` | ${ruleText(rule)} |`);
  rows.push(`| any other | ${policy.others === 'passed' ? 'passed on as written' : '400: not supported'} |`);
  return ['| parameter | rule |', '|---|---|', ...rows].join('\n');
}

function ruleText(rule: ParamRule): string {
  switch (rule.how) {
    case 'mapped':
      return `mapped: ${rule.to}`;
    case 'passed':
      return `passed on${rule.unless === undefined ? '' : ` (left out at ${rule.unless.says})`}`;
    case 'dropped':
      return `dropped: ${rule.why}`;
    case 'refused':
      return `400: ${rule.why}${rule.unless === undefined ? '' : ` (left out at ${rule.unless.says})`}`;
  }
}

/**
 * The table the document holds for `key`: between `<!-- params KEY -->` and
 * `<!-- /params -->`, or another translator's when it says
 * `<!-- params KEY as OTHER -->` (a policy two providers share).
 */
function documented(key: string): string | undefined {
  const as = DOC.indexOf(`<!-- params ${key} as `);
  if (as !== -1) return documented(DOC.slice(as, DOC.indexOf(' -->', as)).split(' ').at(-1)!);
  const start = DOC.indexOf(`<!-- params ${key} -->`);
  if (start === -1) return undefined;
  const from = DOC.indexOf('\n', start) + 1;
  return DOC.slice(from, DOC.indexOf('<!-- /params -->', from)).trim();
}

const PROVIDERS = await loadProviders();

describe('docs/providers.md', () => {
  for (const [name, p] of Object.entries(PROVIDERS)) {
    for (const [api, translators] of Object.entries(p.translators)) {
      for (const [endpoint, t] of Object.entries(translators)) {
        const key = `${name}/${api}/${endpoint}`;
        it(`shows the parameter table of ${key} as the code has it`, () => {
          const table = policyTable(t.params);
          assert.equal(documented(key), table, `docs/providers.md needs, under <!-- params ${key} -->:\n${table}`);
        });
      }
    }
  }
});
