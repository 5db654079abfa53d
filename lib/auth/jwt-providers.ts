import { GatewayError } from '../core/errors';
import { newId } from '../core/ids';
import { deleteJwtProviderItem, findJwtProviderItem, listJwtProviderItems, putJwtProviderItem, type JwtProviderItem } from '../store/jwt-providers';
import type { AuthContext } from './authenticate';

export type { JwtProviderItem };

/** What a caller sets on a provider; the rest (defaults) is filled in. */
export interface JwtProviderFields {
  issuer: string;
  jwks_uri: string;
  audience: string;
  workspace_id: string | null;
  workspace_claim: string | null;
  scopes_claim: string;
  roles_claim: string;
  clock_tolerance_s: number;
  log_claims: string[];
}

const pairTaken = (fields: Pick<JwtProviderFields, 'issuer' | 'audience'>) =>
  new GatewayError(
    409,
    `An identity provider with issuer ${JSON.stringify(fields.issuer)} and audience ${JSON.stringify(fields.audience)} is registered already; a token must find exactly one. Change that one, or use another audience.`,
    { code: 'jwt_provider_exists', param: 'audience' },
  );

/** Whether the caller may see and change the provider: owners every one of the organisation, admins their workspace's. */
export function mayManage(auth: AuthContext, provider: JwtProviderItem): boolean {
  if (provider.organisation_id !== auth.organisationId) return false;
  return auth.role === 'owner' || provider.workspace_id === auth.workspaceId;
}

export async function createJwtProvider(auth: AuthContext, fields: JwtProviderFields): Promise<JwtProviderItem> {
  const now = Math.floor(Date.now() / 1000);
  const item: JwtProviderItem = { id: newId('jwtp'), organisation_id: auth.organisationId, ...fields, created_at: now, updated_at: now };
  if (!(await putJwtProviderItem(item, 'ifAbsent'))) throw pairTaken(fields);
  return item;
}

/** One provider the caller may manage; undefined otherwise (another workspace's is as unknown as a missing one). */
export async function getJwtProvider(auth: AuthContext, id: string): Promise<JwtProviderItem | undefined> {
  const found = await findJwtProviderItem(auth.organisationId, id);
  return found && mayManage(auth, found) ? found : undefined;
}

/** The providers the caller may manage, newest first. */
export async function listJwtProviders(auth: AuthContext): Promise<JwtProviderItem[]> {
  return (await listJwtProviderItems(auth.organisationId)).filter((provider) => mayManage(auth, provider));
}

/**
 * Replaces a provider's fields. A new issuer or audience moves it to its new pair first (409 when
 * another provider holds that pair) and then frees the old one.
 */
export async function replaceJwtProvider(current: JwtProviderItem, fields: JwtProviderFields): Promise<JwtProviderItem> {
  const item: JwtProviderItem = { ...current, ...fields, updated_at: Math.floor(Date.now() / 1000) };
  if (!(await putJwtProviderItem(item, { replacing: current.id }))) throw pairTaken(fields);
  if (item.issuer !== current.issuer || item.audience !== current.audience) await deleteJwtProviderItem(current);
  return item;
}

export function deleteJwtProvider(provider: JwtProviderItem): Promise<boolean> {
  return deleteJwtProviderItem(provider);
}
