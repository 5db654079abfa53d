import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bedrockProvider } from '../../../lib/providers/bedrock';
import { modelPath } from '../../../lib/providers/bedrock/adapter';
import { bedrockAuthHeaders, regionOf, sigV4Headers } from '../../../lib/providers/bedrock/auth';
import type { ResolvedTarget } from '../../../lib/providers/types';
import { verifyAuth } from '../../support/fakes/bedrock';
import { thrownGatewayError } from '../../support/gateway-error';

/**
 * AWS's published SigV4 examples; the credentials are AWS's documented example values.
 * - get-vanilla, post-vanilla, get-vanilla-query-order-key-case, get-vanilla-with-session-token: the
 *   AWS Signature Version 4 test suite (docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html)
 *   as AWS publishes it in github.com/awslabs/aws-c-auth, tests/aws-signing-test-suite/v4/<case>/
 *   header-signed-request.txt and context.json (service "service", us-east-1, 2015-08-30T12:36:00Z).
 * - iam-list-users: the signed `POST https://iam.amazonaws.com/` ListUsers request of "Signed Signature
 *   Version 4 Requests Examples", docs.aws.amazon.com/general/latest/gr/sigv4-signed-request-examples.html.
 */
const example = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const suiteScope = { region: 'us-east-1', service: 'service', date: new Date('2015-08-30T12:36:00Z') };
const vectors = [
  {
    name: 'get-vanilla',
    method: 'GET',
    url: 'https://example.amazonaws.com/',
    signed: 'host;x-amz-date',
    signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'post-vanilla',
    method: 'POST',
    url: 'https://example.amazonaws.com/',
    signed: 'host;x-amz-date',
    signature: '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
  },
  {
    name: 'get-vanilla-query-order-key-case',
    method: 'GET',
    url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1',
    signed: 'host;x-amz-date',
    signature: 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
  },
  {
    name: 'get-vanilla-with-session-token',
    method: 'GET',
    url: 'https://example.amazonaws.com/',
    sessionToken: '6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267',
    signed: 'host;x-amz-date;x-amz-security-token',
    signature: '07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8',
  },
];

/**
 * An independent SigV4 (node:crypto only) to cross-check the library where AWS publishes no vector:
 * the canonical URI is every segment of the wire path URI-encoded once more (the non-S3 rule).
 */
function referenceSign(
  request: { method: string; url: URL; headers: Record<string, string>; body?: string },
  secret: string,
  region: string,
  service: string,
  amzDate: string,
) {
  const escape = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  const canonicalUri = request.url.pathname.split('/').map(escape).join('/');
  const query = [...request.url.searchParams]
    .map(([key, value]) => `${escape(key)}=${escape(value)}`)
    .sort()
    .join('&');
  const headers = Object.entries(request.headers)
    .map(([name, value]) => [name.toLowerCase(), value.trim()] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const signedHeaders = headers.map(([name]) => name).join(';');
  const canonical = [
    request.method,
    canonicalUri,
    query,
    ...headers.map(([name, value]) => `${name}:${value}`),
    '',
    signedHeaders,
    createHash('sha256')
      .update(request.body ?? '')
      .digest('hex'),
  ].join('\n');
  const scope = `${amzDate.slice(0, 8)}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  let key: Buffer = createHmac('sha256', `AWS4${secret}`).update(amzDate.slice(0, 8)).digest();
  for (const part of [region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return { canonical, signedHeaders, signature: createHmac('sha256', key).update(stringToSign).digest('hex') };
}

describe('SigV4 signing reproduces AWS published examples', () => {
  for (const vector of vectors) {
    it(`test suite: ${vector.name}`, async () => {
      const request = { method: vector.method, url: new URL(vector.url), headers: {} };
      const headers = await sigV4Headers(request, { ...example, sessionToken: vector.sessionToken }, suiteScope);
      expect(headers).toEqual({
        authorization: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=${vector.signed}, Signature=${vector.signature}`,
        'x-amz-date': '20150830T123600Z',
        ...(vector.sessionToken ? { 'x-amz-security-token': vector.sessionToken } : {}),
      });
      // The cross-check implementation agrees with the published value too.
      const reference = referenceSign(
        {
          ...request,
          headers: {
            host: 'example.amazonaws.com',
            'x-amz-date': '20150830T123600Z',
            ...(vector.sessionToken ? { 'x-amz-security-token': vector.sessionToken } : {}),
          },
        },
        example.secretAccessKey,
        'us-east-1',
        'service',
        '20150830T123600Z',
      );
      expect(reference.signature).toBe(vector.signature);
    });
  }

  it('docs example: POST iam ListUsers with a signed content-type', async () => {
    const headers = await sigV4Headers(
      {
        method: 'POST',
        url: new URL('https://iam.amazonaws.com/'),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8', 'user-agent': 'not signed' },
        body: Buffer.from('Action=ListUsers&Version=2010-05-08'),
      },
      example,
      { region: 'us-east-1', service: 'iam', date: new Date('2011-09-09T23:36:00Z') },
    );
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20110909/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ced6826de92d2bdeed8f846f0bf508e8559e98e4b0199114b84c54174deb456c',
    );
  });
});

describe('SigV4 for Bedrock paths', () => {
  const date = new Date('2024-05-01T10:00:00Z');
  const models = [
    'anthropic.claude-3-5-sonnet-20240620-v1:0',
    'us.anthropic.claude-3-7-sonnet-20250219-v1:0',
    'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3',
  ];

  for (const model of models) {
    it(`puts ${model} in one segment and signs it double-encoded, as Bedrock verifies`, async () => {
      const url = new URL(`https://bedrock-runtime.us-east-1.amazonaws.com${modelPath(model, 'converse')}`);
      expect(url.pathname.split('/')).toHaveLength(4);
      expect(decodeURIComponent(url.pathname.split('/')[2])).toBe(model);
      const body = '{"messages":[]}';
      const headers = await sigV4Headers(
        { method: 'POST', url, headers: { 'content-type': 'application/json', accept: 'application/json' }, body: Buffer.from(body) },
        example,
        { region: 'us-east-1', date },
      );
      const reference = referenceSign(
        { method: 'POST', url, headers: { 'content-type': 'application/json', host: url.host, 'x-amz-date': '20240501T100000Z' }, body },
        example.secretAccessKey,
        'us-east-1',
        'bedrock',
        '20240501T100000Z',
      );
      // The wire path carries %3A (and %2F); the canonical request one level more: %253A, %252F.
      expect(url.pathname).toContain('%3A');
      expect(reference.canonical.split('\n')[1]).toBe(url.pathname.replaceAll('%', '%25'));
      expect(headers.authorization).toBe(
        `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240501/us-east-1/bedrock/aws4_request, SignedHeaders=${reference.signedHeaders}, Signature=${reference.signature}`,
      );
    });
  }
});

describe('bedrock credentials and region', () => {
  const target = (settings: ResolvedTarget['settings'], baseUrl = 'https://bedrock-runtime.eu-west-1.amazonaws.com'): ResolvedTarget => ({
    provider: bedrockProvider,
    baseUrl,
    settings,
  });
  it('derives the base URL from cloudA_region and names the setting when it is missing or malformed', () => {
    expect(bedrockProvider.baseUrlFor!({ cloudA_region: 'ap-southeast-2' })).toBe('https://bedrock-runtime.ap-southeast-2.amazonaws.com');
    for (const settings of [{}, { cloudA_region: 'evil.example.com/x' }]) {
      const error = thrownGatewayError(() => bedrockProvider.baseUrlFor!(settings));
      expect(error.status).toBe(400);
      expect(error.param).toBe('cloudA_region');
    }
  });

  it('reads the region from a custom Bedrock host when cloudA_region is absent', () => {
    expect(regionOf({}, 'bedrock-runtime.eu-central-1.amazonaws.com')).toBe('eu-central-1');
    expect(regionOf({}, 'vpce-0abc-1234.bedrock-runtime.us-west-2.vpce.amazonaws.com')).toBe('us-west-2');
    expect(() => regionOf({}, '127.0.0.1')).toThrow(/cloudA_region/);
  });

  it('signs a pass-through request (method, URL with query, headers, body) so the fake Bedrock verifies it', async () => {
    const settings = { cloudA_access_key_id: 'AKIDPASS', cloudA_secret_access_key: 'pass/secret', cloudA_session_token: 'tok==', cloudA_region: 'eu-west-1' };
    const url = new URL(`http://127.0.0.1:9${modelPath('amazon.nova-pro-v1:0', 'converse')}?trace=yes&b=2`);
    const body = Buffer.from('{"messages":[{"role":"user","content":[{"text":"hi"}]}]}');
    const clientHeaders = { 'content-type': 'application/json', accept: '*/*', 'x-amzn-bedrock-trace': 'ENABLED', 'user-agent': 'curl' };
    const added = await bedrockProvider.adapter.authenticate({ method: 'POST', url, headers: clientHeaders, body }, target(settings, 'http://127.0.0.1:9'));
    expect(added.authorization).toMatch(/SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amzn-bedrock-trace,/);
    const sent = { ...clientHeaders, ...added, host: url.host };
    const fake = { accessKeyId: 'AKIDPASS', secretAccessKey: 'pass/secret', sessionToken: 'tok==', region: 'eu-west-1' };
    expect(await verifyAuth(fake, 'POST', `${url.pathname}${url.search}`, sent, body)).toEqual({ auth: 'sigv4' });
    // Any change to what was signed breaks it.
    expect(await verifyAuth(fake, 'POST', `${url.pathname}${url.search}`, sent, Buffer.concat([body, Buffer.from(' ')]))).toMatchObject({
      error: 'InvalidSignatureException',
    });
    expect(await verifyAuth(fake, 'POST', `${url.pathname}?trace=no&b=2`, sent, body)).toMatchObject({ error: 'InvalidSignatureException' });
    expect(await verifyAuth({ ...fake, secretAccessKey: 'other' }, 'POST', `${url.pathname}${url.search}`, sent, body)).toMatchObject({
      error: 'InvalidSignatureException',
    });
  });

  it('falls back on a Bedrock API key, and asks for credentials when there are none', async () => {
    const request = { method: 'POST', url: new URL('https://bedrock-runtime.eu-west-1.amazonaws.com/model/m/converse'), headers: {} };
    expect(await bedrockAuthHeaders(request, { api_key: 'br-key' })).toEqual({ authorization: 'Bearer br-key' });
    await expect(bedrockAuthHeaders(request, {})).rejects.toMatchObject({ status: 400, param: 'cloudA_access_key_id' });
    await expect(bedrockAuthHeaders(request, { cloudA_access_key_id: 'AKID' })).rejects.toMatchObject({ status: 400, param: 'cloudA_secret_access_key' });
  });
});
