// The setup the Cohere adapter's black-box tests share: one gateway and one mock Cohere
// per suite, an OpenAI SDK client routed to Cohere through the gateway, and the same
// routing headers for plain fetch calls.
import { after, afterEach, before } from 'node:test';
import OpenAI from 'openai';
import { ADMIN_KEY, startTestGateway, type TestGateway } from './gateway.js';
import { startMockCohere, type MockCohere } from './mock-cohere.js';

export const KEY = 'co-test-0123456789';

export interface CohereFixture {
  gw: TestGateway;
  mock: MockCohere;
  client: OpenAI;
  /** Headers that route a gw.call() to the mock Cohere with KEY. */
  routed: Record<string, string>;
}

/** Registers the calling suite's hooks; the fields are set once its before() ran, and the mock is reset after each test. */
export function useCohere(): CohereFixture {
  const f = {} as CohereFixture;
  before(async () => {
    const [gw, mock] = await Promise.all([startTestGateway(), startMockCohere({ apiKey: KEY })]);
    f.gw = gw;
    f.mock = mock;
    f.routed = { 'x-gateway-provider': 'cohere', 'x-gateway-custom-host': mock.url, authorization: `Bearer ${KEY}` };
    f.client = new OpenAI({
      apiKey: KEY,
      baseURL: gw.v1,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': 'cohere', 'x-gateway-custom-host': mock.url },
    });
  });
  afterEach(() => f.mock.reset());
  after(async () => {
    await f.gw.stop();
    await f.mock.close();
  });
  return f;
}
