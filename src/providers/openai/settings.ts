/**
 * The OpenAI-compatible family's config keys: OpenAI's organization and
 * project headers. Every other key a compatible host needs (api_key,
 * custom_host) is one every target has.
 */
import { headerValue } from '../../shared/json-schema.js';
import { providerSettings, type SettingsOf } from '../shared/settings.js';

export const OPENAI_SETTINGS = providerSettings({
  // Both are sent as headers (OpenAI-Organization, OpenAI-Project).
  keys: { vendor_organization: headerValue, vendor_project: headerValue },
  secrets: [],
  destinations: [],
  keyGroups: [],
});

export type OpenAISettings = SettingsOf<typeof OPENAI_SETTINGS>;
