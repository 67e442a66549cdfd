/**
 * Bedrock's config keys (spec: the cloud1 keys): the AWS credentials every
 * call is signed with (temporary ones with their session token) and the
 * region, us-east-1 when absent.
 *
 * The cloud1_batch_* keys are for batches run as Bedrock model invocation
 * jobs (docs/batches.md): where the gateway puts a job's input and Bedrock
 * writes its output, the IAM role Bedrock assumes to read and write there,
 * and, for VPC endpoints or S3-compatible test servers, the control-plane
 * and S3 URLs. LiteLLM and Portkey take the same facts (a bucket, a role
 * ARN); the names here follow the spec's cloud1_ prefix.
 */
import { headerValue, str } from '../../shared/json-schema.js';
import { providerSettings, type SettingsOf } from '../shared/settings.js';

export const BEDROCK_SETTINGS = providerSettings({
  // The session token is sent as x-amz-security-token.
  keys: {
    cloud1_access_key_id: str,
    cloud1_secret_access_key: str,
    cloud1_region: str,
    cloud1_session_token: headerValue,
    cloud1_batch_s3_uri: str,
    cloud1_batch_output_s3_uri: str,
    cloud1_batch_role_arn: str,
    cloud1_batch_control_url: str,
    cloud1_batch_s3_endpoint: str,
  },
  secrets: ['cloud1_access_key_id', 'cloud1_secret_access_key', 'cloud1_session_token'],
  // The region names the host the signed requests go to; the batch keys name
  // where a job's requests are signed for and where its data goes, so a
  // request-time config can change none of them.
  destinations: ['cloud1_region', 'cloud1_batch_s3_uri', 'cloud1_batch_output_s3_uri', 'cloud1_batch_role_arn', 'cloud1_batch_control_url', 'cloud1_batch_s3_endpoint'],
  keyGroups: [['cloud1_access_key_id', 'cloud1_secret_access_key']],
});

export type BedrockSettings = SettingsOf<typeof BEDROCK_SETTINGS>;
