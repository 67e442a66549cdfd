/**
 * Vertex AI's config keys (spec: the cloud2 keys): the project and region in
 * every URL, and the service account key file exchanged for access tokens
 * (auth.ts), which may also name the project.
 */
import { jsonObject, str } from '../../shared/json-schema.js';
import { providerSettings, type SettingsOf } from '../shared/settings.js';

export const VERTEX_AI_SETTINGS = providerSettings({
  keys: { cloud2_project_id: str, cloud2_region: str, cloud2_service_account_json: jsonObject },
  secrets: ['cloud2_service_account_json'],
  // Region and project name the host and resource the access token is sent to. The token endpoint
  // (token_uri) is inside the service account JSON, a secret: it changes only with the whole key file.
  destinations: ['cloud2_region', 'cloud2_project_id'],
  keyGroups: [
    ['cloud2_region', 'cloud2_service_account_json'],
    ['cloud2_region', 'cloud2_project_id'],
  ],
});

export type VertexAISettings = SettingsOf<typeof VERTEX_AI_SETTINGS>;
