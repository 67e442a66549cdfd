/**
 * The OpenAI-compatible family's config keys: OpenAI's organization and
 * project headers. Every other key a compatible host needs (api_key,
 * custom_host) is one every target has.
 */
import { str } from '../../shared/json-schema.js';
import { providerSettings, type SettingsOf } from '../shared/settings.js';

export const OPENAI_SETTINGS = providerSettings({
  keys: { vendor_organization: str, vendor_project: str },
  secrets: [],
  destinations: [],
  keyGroups: [],
});

export type OpenAISettings = SettingsOf<typeof OPENAI_SETTINGS>;
