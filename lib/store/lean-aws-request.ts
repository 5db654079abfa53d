/**
 * Requests to AWS services without their SDK clients, for the few calls of the response cache's
 * hot path: GetItem and Query (lean-dynamo.ts) and S3 object reads and writes (s3-object.ts). A request goes
 * over the gateway's own HTTP client, signed with SigV4, to the place the service's SDK client
 * talks to (clients.ts) with the credentials that client uses in the function bundles: the
 * emulator endpoint and its static credentials locally, else the service's regional endpoint with
 * the role credentials Lambda puts in the environment.
 *
 * `send` answers undefined when a request is not its to send, and the caller takes the fallback it
 * has: when the environment has no credentials or region of its own (a deployer's profile, say),
 * and from the first time the outbound address guard refuses the endpoint (a VPC endpoint's private
 * address, say) until the endpoint or keys change. DynamoDB falls back to its SDK client, which the
 * bundles carry anyway. S3's client is what s3-object.ts keeps out of the inference bundles, so it
 * falls back to `sendDirect`: the same signed request over Node's own HTTP stack, unguarded as the
 * SDK's connections are.
 *
 * There is no retry ladder (one more attempt only when the connection fails before an answer):
 * these are cache reads and writes, and one that fails is a miss or an answer left uncached.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { SignatureV4 } from '@smithy/signature-v4';
import { GatewayError } from '../core/errors';
import { openOutbound, type OutboundRequest, type OutboundResponse } from '../outbound/http-client';
import { Sha256, type AwsCredentials } from '../outbound/sigv4';
import { endpointEnv, localSettings } from './clients';

export interface LeanAwsService {
  /** The SigV4 signing name, which also picks the variable naming the local emulator (`endpointEnv`). */
  service: keyof typeof endpointEnv;
  /** Names the service in error messages. */
  target: string;
  /**
   * S3's signing rules: the path is signed as sent (other services sign it percent-encoded once
   * more), and the payload's SHA-256 travels in `x-amz-content-sha256`, which S3 requires.
   */
  s3?: boolean;
}

/** Where a request goes. */
export interface LeanAwsDestination {
  /** The local emulator's endpoint; undefined in AWS, where the service's regional endpoint is. */
  endpoint: URL | undefined;
  region: string;
}

export interface LeanAwsRequest {
  method: 'GET' | 'PUT' | 'POST';
  /** Without a query; its path percent-encoded as it is to be sent and signed. */
  url: URL;
  headers: Record<string, string>;
  body?: Buffer | string;
}

/** The environment values a destination was built from, and what was built. */
interface State {
  endpoint: string | undefined;
  region: string | undefined;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  sessionToken: string | undefined;
  /** Undefined when the environment has no credentials or region of its own. */
  signing: { destination: LeanAwsDestination; signer: SignatureV4 } | undefined;
  /** The address guard refused the endpoint: the fallback sends from then on. */
  refused: boolean;
}

/** The host of a service's regional endpoint (AWS's China regions have a domain of their own). */
export function regionalHost(prefix: string, region: string): string {
  return `${prefix}.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

export class LeanAwsClient {
  private state: State | undefined;

  constructor(private readonly options: LeanAwsService) {}

  /**
   * Sends the request `build` makes for the destination, over the gateway's outbound client; or
   * answers undefined, sending nothing, when the caller's fallback is to send it (see the top).
   */
  async send(build: (destination: LeanAwsDestination) => LeanAwsRequest): Promise<OutboundResponse | undefined> {
    const state = this.current();
    if (!state.signing || state.refused) return undefined;
    const request = await this.signed(state.signing, build);
    try {
      return await twice(
        () => openOutbound(request).response,
        (error) => error instanceof GatewayError && error.status === 502,
      );
    } catch (error) {
      if (!(error instanceof GatewayError) || error.code !== 'custom_host_not_allowed') throw error;
      state.refused = true;
      return undefined;
    }
  }

  /**
   * Sends the request over Node's own HTTP stack, which the outbound address guard does not watch:
   * the fallback for a service whose SDK client the bundle should not carry. It still needs the
   * environment's credentials (the SDK client in the function bundles would need them too).
   */
  async sendDirect(build: (destination: LeanAwsDestination) => LeanAwsRequest): Promise<OutboundResponse> {
    const { signing } = this.current();
    if (!signing) {
      throw new Error(
        `No AWS credentials or region in the environment for ${this.options.target}: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY ` +
          `(and AWS_SESSION_TOKEN) and AWS_REGION, as Lambda sets them, or ${endpointEnv[this.options.service]} for a local emulator.`,
      );
    }
    const request = await this.signed(signing, build);
    return twice(
      () => sendUnguarded(request),
      () => true,
    );
  }

  private async signed(signing: NonNullable<State['signing']>, build: (destination: LeanAwsDestination) => LeanAwsRequest): Promise<OutboundRequest> {
    const { method, url, headers, body } = build(signing.destination);
    const signed = await signing.signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: {},
      headers: { ...headers, host: url.host },
      body,
    });
    return { url, method, headers: signed.headers as Record<string, string>, body, target: this.options.target };
  }

  /**
   * Built once per process and kept while the environment says the same: Lambda's role credentials
   * are fixed for a container's life, and the signer keeps its derived signing key per day. Tests
   * and the local runtime move endpoints and keys around, hence the comparison on every call (a few
   * environment reads, next to a network round trip).
   */
  private current(): State {
    const env = process.env;
    const endpoint = env[endpointEnv[this.options.service]];
    const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
    const accessKeyId = env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
    const sessionToken = env.AWS_SESSION_TOKEN;
    const known = this.state;
    if (
      known &&
      known.endpoint === endpoint &&
      known.region === region &&
      known.accessKeyId === accessKeyId &&
      known.secretAccessKey === secretAccessKey &&
      known.sessionToken === sessionToken
    ) {
      return known;
    }
    const signing = this.signingFor(endpoint, region, accessKeyId, secretAccessKey, sessionToken);
    this.state = { endpoint, region, accessKeyId, secretAccessKey, sessionToken, signing, refused: false };
    return this.state;
  }

  private signingFor(
    endpoint: string | undefined,
    region: string | undefined,
    accessKeyId?: string,
    secretAccessKey?: string,
    sessionToken?: string,
  ): State['signing'] {
    const { service, s3 = false } = this.options;
    const local = endpoint ? localSettings(endpointEnv[service]) : undefined;
    const fromEnv: AwsCredentials | undefined =
      accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } : undefined;
    const credentials = local?.credentials ?? fromEnv;
    const signingRegion = local?.region ?? region;
    if (!credentials || !signingRegion) return undefined;
    const signer = new SignatureV4({ credentials, region: signingRegion, service, sha256: Sha256, applyChecksum: s3, uriEscapePath: !s3 });
    return { destination: { endpoint: local ? new URL(local.endpoint) : undefined, region: signingRegion }, signer };
  }
}

/**
 * Every request sent here is safe to send twice (reads, and writes of the same whole object), and a
 * pooled connection that the service closed as the request went out would otherwise fail it.
 */
async function twice<T>(attempt: () => Promise<T>, retryable: (error: unknown) => boolean): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (!retryable(error)) throw error;
    return attempt();
  }
}

let agents: { http: HttpAgent; https: HttpsAgent } | undefined;

/** The request over node:http(s), with connection reuse as the SDK clients have it (clients.ts). */
function sendUnguarded(request: OutboundRequest): Promise<OutboundResponse> {
  agents ??= { http: new HttpAgent({ keepAlive: true, maxSockets: 50 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 50 }) };
  const { url, method, headers, body } = request;
  const secure = url.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = send(
      url,
      {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: secure ? agents!.https : agents!.http,
      },
      (response) => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: response }),
    );
    outgoing.once('error', reject);
    outgoing.end(body);
  });
}
