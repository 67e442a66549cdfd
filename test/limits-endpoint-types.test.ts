// Endpoint types of model requests, for policies' `endpoint_type` condition.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ENDPOINT_TYPES, endpointType } from '../src/limits/endpoint-types.js';

describe('endpoint types', () => {
  it('names the model endpoints as Portkey does, streamed or not', () => {
    for (const [method, path, type] of [
      ['POST', '/chat/completions', 'chatComplete'],
      ['POST', '/chat/completions/', 'chatComplete'],
      ['POST', '/completions', 'complete'],
      ['POST', '/embeddings', 'embed'],
      ['POST', '/images/generations', 'imageGenerate'],
      ['POST', '/audio/speech', 'createSpeech'],
      ['POST', '/messages', 'messages'],
      ['POST', '/messages/count_tokens', 'messagesCountTokens'],
      ['POST', '/responses', 'createModelResponse'],
      ['GET', '/responses/resp_1', 'getModelResponse'],
      ['DELETE', '/responses/resp_1', 'deleteModelResponse'],
      ['GET', '/responses/resp_1/input_items', 'listResponseInputItems'],
      ['POST', '/files', 'uploadFile'],
      ['GET', '/files/file-1/content', 'retrieveFileContent'],
      ['POST', '/batches/batch_1/cancel', 'cancelBatch'],
      ['GET', '/batches/batch_1/output', 'getBatchOutput'],
      ['POST', '/fine_tuning/jobs', 'createFinetune'],
      ['GET', '/fine_tuning/jobs/ftjob-1', 'retrieveFinetune'],
    ] as const) {
      assert.equal(endpointType(method, path), type, `${method} ${path}`);
    }
  });

  it('anything else is the generic proxy', () => {
    for (const [method, path] of [
      ['GET', '/chat/completions'],
      ['POST', '/assistants'],
      ['POST', '/files//content'],
      ['GET', '/responses/resp_1/input_items/extra'],
      ['POST', '/vector_stores/vs_1/files'],
    ] as const) {
      assert.equal(endpointType(method, path), 'proxy', `${method} ${path}`);
    }
  });

  it('every type a route yields is one a policy may name', () => {
    assert.ok(ENDPOINT_TYPES.includes(endpointType('POST', '/chat/completions')));
    assert.equal(new Set(ENDPOINT_TYPES).size, ENDPOINT_TYPES.length);
    assert.ok(!ENDPOINT_TYPES.some((t) => t.startsWith('stream-')), 'streaming is not a type of its own');
  });
});
