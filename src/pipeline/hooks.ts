/**
 * The before-hooks and after-hooks stages: where guardrails and other
 * request and answer checks run, each a step of one of
 * them — before-hooks once the body is known and before the cache is asked,
 * after-hooks once the answer is in OpenAI's shape and before it is written.
 * Steps run in order; one that answers the request ends it.
 */
import { runStages, type Stage } from './context.js';

export function hooks(name: 'before-hooks' | 'after-hooks', steps: readonly Stage[]): Stage {
  return { name, run: (ctx) => runStages(steps, ctx) };
}
