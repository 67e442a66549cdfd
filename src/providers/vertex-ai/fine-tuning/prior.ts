/**
 * Calls to Vertex AI the adapter makes itself, before the routed one, where
 * one OpenAI request needs two Vertex calls:
 *
 * - a cancel: Vertex's `:cancel` answers an empty object, OpenAI's the job,
 *   so the cancel is sent here and the routed call is the GET of the job
 *   that follows it;
 * - a list with `after`: OpenAI pages by the id of the last job of the
 *   previous page, Vertex by an opaque pageToken. The pages are read here,
 *   WALK_SIZE jobs each and at most MAX_PAGES of them, until the one holding
 *   that job; the routed call reads that page again (or the next, when the
 *   job ended its page) and answers what follows the job.
 *
 * They go through the upstream client (its address policy) with a timeout,
 * and stop when the client leaves, but not through the router: no retries,
 * no log line of their own, not counted as attempts (a plan makes at most
 * 1 + MAX_PAGES of them).
 */
import { err, GatewayError, invalid, ok, type Result } from '../../../shared/errors.js';
import { Cancel } from '../../../upstream/cancel.js';
import { send } from '../../../upstream/client.js';
import { UpstreamAddressDenied } from '../../../upstream/policy.js';
import { googleError } from '../../google/errors.js';
import { parseAnswer } from '../../shared/openai-answer.js';
import { jobId } from './response.js';
import type { ListTuningJobsResponse } from './wire.js';

const TIMEOUT_MS = 30_000;
/** A page of Vertex's list is read whole: more than this is not a page of tuning jobs. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** Jobs per page read while looking for `after`, and per page of an answer to a list with `after`. */
export const WALK_SIZE = 100;
/** Pages read looking for `after`: the newest MAX_PAGES × WALK_SIZE jobs can be paged through. */
export const MAX_PAGES = 10;

/** POST {location}/tuningJobs/{id}:cancel; Vertex's error (an unknown or ended job) as it said it. */
export async function cancelJob(jobUrl: string, authorization: string, signal: Cancel | undefined): Promise<Result<void>> {
  const answer = await call(`${jobUrl}:cancel`, 'POST', authorization, signal);
  return answer.ok ? ok(undefined) : answer;
}

/** Where a list with `after` reads its jobs: the page (its token; none for the first) and the job to answer from after, if it is on it. */
export interface PageAfter {
  pageToken: string | undefined;
  through: string | undefined;
}

export async function pageAfter(listUrl: string, authorization: string, after: string, signal: Cancel | undefined): Promise<Result<PageAfter>> {
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await call(`${listUrl}?pageSize=${WALK_SIZE}${token === undefined ? '' : `&pageToken=${encodeURIComponent(token)}`}`, 'GET', authorization, signal);
    if (!answer.ok) return answer;
    const list = answer.value as ListTuningJobsResponse;
    const jobs = list.tuningJobs ?? [];
    const next = list.nextPageToken === '' ? undefined : list.nextPageToken;
    const at = jobs.findIndex((job) => jobId(job) === after);
    if (at === jobs.length - 1 && next !== undefined) return ok({ pageToken: next, through: undefined });
    if (at !== -1) return ok({ pageToken: token, through: after });
    if (next === undefined) break;
    token = next;
  }
  return err(invalid(`after: '${after}' is not among the newest ${MAX_PAGES * WALK_SIZE} tuning jobs of this project and region`, 'after'));
}

/** One call; its JSON object, or the error it answered (Google's envelope, Vertex's status). It stops when the client leaves (`signal`). */
async function call(url: string, method: 'GET' | 'POST', authorization: string, signal: Cancel | undefined): Promise<Result<unknown>> {
  const timer = (signal ?? new Cancel()).withTimeout(TIMEOUT_MS);
  try {
    const res = await send({ url, method, headers: { authorization, 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : null }, timer.cancel);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_ANSWER_BYTES) {
        res.body.destroy();
        return err(new GatewayError(502, `vertex-ai answered more than ${MAX_ANSWER_BYTES} bytes to ${method} ${new URL(url).pathname}`, { code: 'bad_upstream_response' }));
      }
      chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks);
    if (res.statusCode < 200 || res.statusCode >= 300) return err(googleError(res.statusCode, raw));
    return parseAnswer(raw, 'vertex-ai');
  } catch (e) {
    if (e instanceof UpstreamAddressDenied) return err(e);
    const reason = timer.timedOut() ? `no answer within ${TIMEOUT_MS} ms` : ((e as { code?: string }).code ?? (e as Error).message);
    return err(new GatewayError(502, `could not reach vertex-ai: ${reason}`, { code: 'upstream_unreachable' }));
  } finally {
    timer.release();
  }
}
