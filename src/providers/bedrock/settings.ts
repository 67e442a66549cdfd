/**
 * Bedrock's config keys (spec: the cloud1 keys): the AWS credentials every
 * call is signed with (temporary ones with their session token) and the
 * region, us-east-1 when absent.
 */
import { headerValue, str } from '../../shared/json-schema.js';
import { providerSettings, type SettingsOf } from '../shared/settings.js';

export const BEDROCK_SETTINGS = providerSettings({
  // The session token is sent as x-amz-security-token.
  keys: { cloud1_access_key_id: str, cloud1_secret_access_key: str, cloud1_region: str, cloud1_session_token: headerValue },
  secrets: ['cloud1_access_key_id', 'cloud1_secret_access_key', 'cloud1_session_token'],
  // The region names the host the signed requests go to.
  destinations: ['cloud1_region'],
  keyGroups: [['cloud1_access_key_id', 'cloud1_secret_access_key']],
});

export type BedrockSettings = SettingsOf<typeof BEDROCK_SETTINGS>;
