/**
 * What a batch's lines run with: the create request's gateway options, as a live request with the
 * same headers would run (provider, key, config, custom host, timeout, cache, forwarded headers).
 * They carry credentials, so they are sealed with the batch's workspace key and opened by the worker.
 */
import type { InferenceOptions } from '../inference/inference-request';
import { decryptSecrets, encryptSecrets, type EncryptedBlob } from '../secrets/envelope';

export interface LineOptions {
  options: InferenceOptions;
  /** The client headers the options forward, with their values. */
  headers: Record<string, string>;
}

export async function sealLineOptions(workspaceId: string, lineOptions: LineOptions): Promise<EncryptedBlob> {
  const { config } = lineOptions.options;
  // An inline config's plan is derived from it; only the config itself is kept.
  const storedConfig = config.kind === 'inline' ? { kind: 'inline' as const, config: config.config } : config;
  return encryptSecrets(
    { options: { ...lineOptions.options, config: storedConfig }, headers: lineOptions.headers } as unknown as Record<string, object>,
    workspaceId,
  );
}

export async function openLineOptions(workspaceId: string, sealed: EncryptedBlob): Promise<LineOptions> {
  return decryptSecrets<LineOptions & Record<string, object>>(sealed, workspaceId);
}
