/**
 * The providers whose fine-tuning API the gateway drives, and the API of each.
 */
import { mistralFineTuningApi } from './mistral-fine-tuning';
import { openAIFineTuningApi } from './openai-fine-tuning';
import type { ProviderFineTuningApi } from './provider-api';
import { togetherFineTuningApi } from './together-fine-tuning';

const apis: Record<string, ProviderFineTuningApi> = {
  openai: openAIFineTuningApi,
  'azure-openai': openAIFineTuningApi,
  'mistral-ai': mistralFineTuningApi,
  'together-ai': togetherFineTuningApi,
};

export const fineTuningProviders: readonly string[] = Object.keys(apis);

export function fineTuningApiOf(provider: string): ProviderFineTuningApi | undefined {
  return Object.hasOwn(apis, provider) ? apis[provider] : undefined;
}
