import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { badRequest } from '../../core/errors';

/** What the gateway uses of a service account key file. */
export interface ServiceAccount {
  clientEmail: string;
  privateKey: KeyObject;
  privateKeyId?: string;
  tokenUri: string;
}

const googleTokenUri = 'https://oauth2.googleapis.com/token';
export const cloudPlatformScope = 'https://www.googleapis.com/auth/cloud-platform';
const param = 'cloudB_service_account_json';

/** Reads `cloudB_service_account_json`; a 400 names the field that is missing or wrong. */
export function readServiceAccount(json: Record<string, unknown>): ServiceAccount {
  const { client_email: clientEmail, private_key: pem, private_key_id: privateKeyId, token_uri: tokenUri } = json;
  if (typeof clientEmail !== 'string' || !clientEmail)
    throw badRequest(`${param}.client_email is missing: use the service account's JSON key file as it is.`, `${param}.client_email`, 'invalid_service_account');
  if (typeof pem !== 'string' || !pem)
    throw badRequest(`${param}.private_key is missing: use the service account's JSON key file as it is.`, `${param}.private_key`, 'invalid_service_account');
  let privateKey: KeyObject;
  try {
    // Keys pasted through an environment variable often arrive with their newlines escaped.
    privateKey = createPrivateKey(pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem);
  } catch {
    throw badRequest(`${param}.private_key is not a PEM private key.`, `${param}.private_key`, 'invalid_service_account');
  }
  if (privateKey.asymmetricKeyType !== 'rsa')
    throw badRequest(
      `${param}.private_key must be an RSA key (Google signs service account tokens with RS256).`,
      `${param}.private_key`,
      'invalid_service_account',
    );
  const uri = typeof tokenUri === 'string' && tokenUri ? tokenUri : googleTokenUri;
  if (!/^https?:\/\//i.test(uri) || !URL.canParse(uri))
    throw badRequest(`${param}.token_uri must be an http(s) URL.`, `${param}.token_uri`, 'invalid_service_account');
  return { clientEmail, privateKey, privateKeyId: typeof privateKeyId === 'string' && privateKeyId ? privateKeyId : undefined, tokenUri: uri };
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * The signed JWT a service account trades for an access token (RFC 7523 JWT-bearer grant): RS256,
 * `kid` = the key id; `iss` and `sub` = the account, `aud` = its token endpoint, the cloud-platform
 * scope, valid for the one hour Google allows.
 * @see https://developers.google.com/identity/protocols/oauth2/service-account#authorizingrequests
 */
export function signAssertion(account: ServiceAccount, nowSeconds: number): string {
  const header = base64url({ alg: 'RS256', typ: 'JWT', ...(account.privateKeyId ? { kid: account.privateKeyId } : {}) });
  const claims = base64url({
    iss: account.clientEmail,
    sub: account.clientEmail,
    aud: account.tokenUri,
    scope: cloudPlatformScope,
    iat: nowSeconds,
    exp: nowSeconds + 3600,
  });
  const signature = sign('RSA-SHA256', Buffer.from(`${header}.${claims}`), account.privateKey).toString('base64url');
  return `${header}.${claims}.${signature}`;
}
