/**
 * Anthropic takes no config keys of its own: the API key (api_key, else the
 * client's Authorization) and custom_host, which every target has, are all
 * its adapter reads.
 */
import { providerSettings, type SettingsOf } from '../shared/settings.js';

export const ANTHROPIC_SETTINGS = providerSettings({ keys: {}, secrets: [], destinations: [], keyGroups: [] });

export type AnthropicSettings = SettingsOf<typeof ANTHROPIC_SETTINGS>;
