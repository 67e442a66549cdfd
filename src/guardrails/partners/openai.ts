/**
 * OpenAI's moderation API as a third-party guardrail:
 * `openai.moderateContent` posts the judged text parts to
 * `{apiDomain}/v1/moderations` (`input`, `model`, default
 * omni-moderation-latest) with the stored OpenAI key, and fails when a
 * result is flagged. Its data: the model and the flagged categories (names,
 * never the text).
 */
import { nonEmptyStr, optional } from '../../shared/json-schema.js';
import { needText } from '../check.js';
import { call, jsonOf } from '../outbound.js';
import type { Partner } from './partner.js';

/** A moderation answer holds a few scores per input. */
const MAX_ANSWER_BYTES = 1024 * 1024;

interface Moderation {
  model?: string;
}

export const openai: Partner = {
  name: 'openai',
  provider: 'openai',
  host: 'https://api.openai.com',
  checks: {
    moderateContent: {
      hooks: ['before', 'after'],
      parameters: optional({ model: nonEmptyStr }),
      async run(s, p: Moderation, c) {
        needText(s);
        const model = p.model ?? 'omni-moderation-latest';
        const answer = jsonOf(
          await call({
            url: `${c.baseUrl}/v1/moderations`,
            headers: { authorization: `Bearer ${c.apiKey}` },
            json: { input: s.texts.filter((t) => t.trim() !== ''), model },
            timeoutMs: c.timeoutMs,
            maxBytes: MAX_ANSWER_BYTES,
          }),
          'the moderation API',
        );
        if (!Array.isArray(answer.results)) throw new Error('the moderation API answered without results');
        const results = answer.results as { flagged?: unknown; categories?: Record<string, unknown> }[];
        const flagged = results.some((r) => r.flagged === true);
        const categories = [...new Set(results.flatMap((r) => Object.entries(r.categories ?? {}).filter(([, v]) => v === true).map(([k]) => k)))];
        return {
          verdict: !flagged,
          explanation: flagged ? `the moderation API flagged it: ${categories.join(', ') || 'no category named'}` : 'the moderation API flagged nothing',
          data: { model: typeof answer.model === 'string' ? answer.model : model, flagged, categories },
        };
      },
    },
  },
};
