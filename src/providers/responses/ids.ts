/**
 * Ids of what the gateway makes for the Responses API: the response and the
 * items of its input and output. `resp_sy…` marks a response the gateway
 * made (and may have stored), so a chained request, a retrieve or a delete
 * can tell the gateway's responses from those a provider stores itself
 * (OpenAI's `resp_…`). The hex is a time-ordered UUID: ids sort in creation order.
 */
import { newId } from '../../store/ids.js';

export const GATEWAY_RESPONSE_PREFIX = 'resp_sy';

const hex = (): string => newId().replaceAll('-', '');

/** An output or input item's id: `msg_…`, `fc_…` (function call), `fco_…` (its output), `rs_…` (reasoning). */
export function itemId(prefix: 'msg' | 'fc' | 'fco' | 'rs' | 'item'): string {
  return `${prefix}_${hex()}`;
}

export function responseId(): string {
  return GATEWAY_RESPONSE_PREFIX + hex();
}

/** Whether `id` names a response the gateway made. */
export function isGatewayResponseId(id: unknown): id is string {
  return typeof id === 'string' && id.length > GATEWAY_RESPONSE_PREFIX.length && id.startsWith(GATEWAY_RESPONSE_PREFIX);
}
