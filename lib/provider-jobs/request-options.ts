import {
  readCacheHeaders,
  readConfigHeader,
  readForwardHeaderNames,
  readProviderCredentials,
  readRequestTimeoutHeader,
} from '../http/inference/option-headers';
import type { RouteContext } from '../http/pipeline';
import type { LineOptions } from './sealed-options';

/** The gateway options of a request that creates long work (a batch, a fine-tuning job): what its provider calls run with. */
export async function workOptionsOf({ request }: RouteContext): Promise<LineOptions> {
  const headers = request.headers;
  const forwardHeaderNames = readForwardHeaderNames(headers);
  const forwarded: Record<string, string> = {};
  for (const name of forwardHeaderNames) if (headers[name] !== undefined) forwarded[name] = headers[name];
  return {
    options: {
      config: await readConfigHeader(headers),
      credentials: readProviderCredentials(headers),
      timeoutMs: readRequestTimeoutHeader(headers),
      forwardHeaderNames,
      cache: readCacheHeaders(headers),
    },
    headers: forwarded,
  };
}
