/**
 * A fine-tuning plan (request.ts) as the routed Vertex AI call, after the
 * calls that must come before it (prior.ts): the URL under the project's
 * location, the method (a cancel is read back with a GET), the body, and
 * how its answer becomes OpenAI's (response.ts).
 */
import { ok, type Result } from '../../../shared/errors.js';
import type { Cancel } from '../../../upstream/cancel.js';
import type { TranslatedCall } from '../../contract.js';
import { cancelJob, pageAfter, WALK_SIZE } from './prior.js';
import { jobAnswer, jobListAnswer } from './response.js';
import type { TuningPlan } from './request.js';

/** `location`: …/v1/projects/{project}/locations/{region}; `authorization`: the Bearer header value. */
export async function tuningCall(plan: TuningPlan, location: string, authorization: string, signal: Cancel | undefined): Promise<Result<TranslatedCall>> {
  const jobs = `${location}/tuningJobs`;
  const headers = { authorization };
  const get = (url: string, answer: TranslatedCall['answer']): Result<TranslatedCall> => ok({ kind: 'translated', method: 'GET', url, headers, body: null, answer });
  switch (plan.kind) {
    case 'create':
      return ok({ kind: 'translated', method: 'POST', url: jobs, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(plan.body), answer: jobAnswer });
    case 'job':
      return get(`${jobs}/${plan.id}`, plan.answer);
    case 'cancel': {
      const cancelled = await cancelJob(`${jobs}/${plan.id}`, authorization, signal);
      return cancelled.ok ? get(`${jobs}/${plan.id}`, jobAnswer) : cancelled;
    }
    case 'list': {
      const { after, limit } = plan.query;
      if (after === undefined) return get(`${jobs}?pageSize=${limit}`, jobListAnswer(undefined, limit));
      const page = await pageAfter(jobs, authorization, after, signal);
      if (!page.ok) return page;
      const token = page.value.pageToken === undefined ? '' : `&pageToken=${encodeURIComponent(page.value.pageToken)}`;
      return get(`${jobs}?pageSize=${WALK_SIZE}${token}`, jobListAnswer(page.value.through, limit));
    }
  }
}
