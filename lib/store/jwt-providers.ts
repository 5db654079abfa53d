import { DeleteItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { jwtProviderKey } from './keys';
import { queryAllNewestFirst } from './newest-first';
import { tables } from './tables';

/** A JWT identity provider as stored. Nothing in it is secret: a JWKS URL and claim names. */
export interface JwtProviderItem {
  id: string;
  organisation_id: string;
  /** The workspace every token of the provider acts in, or null when `workspace_claim` names it per token. */
  workspace_id: string | null;
  workspace_claim: string | null;
  issuer: string;
  jwks_uri: string;
  audience: string;
  scopes_claim: string;
  roles_claim: string;
  clock_tolerance_s: number;
  /** Claims copied into each request's log record beside `jwt_sub`. */
  log_claims: string[];
  created_at: number;
  updated_at: number;
}

/**
 * Writes a provider under its (issuer, audience) pair. `ifAbsent`: the pair must be free;
 * `{replacing}`: the pair must be free or already this provider's. False when it is another's.
 */
export function putJwtProviderItem(item: JwtProviderItem, condition: 'ifAbsent' | { replacing: string }): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall({
          ...jwtProviderKey.item(item.issuer, item.audience),
          gsi1pk: jwtProviderKey.organisationList(item.organisation_id),
          gsi1sk: item.id,
          ...item,
        }),
        ConditionExpression: condition === 'ifAbsent' ? 'attribute_not_exists(pk)' : 'attribute_not_exists(pk) OR id = :id',
        ExpressionAttributeValues: condition === 'ifAbsent' ? undefined : marshall({ ':id': condition.replacing }),
      }),
    ),
  );
}

/** Deletes the provider stored under its pair, if it is still this one; false otherwise. */
export function deleteJwtProviderItem(item: Pick<JwtProviderItem, 'id' | 'issuer' | 'audience'>): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new DeleteItemCommand({
        TableName: tables.control,
        Key: marshall(jwtProviderKey.item(item.issuer, item.audience)),
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: marshall({ ':id': item.id }),
      }),
    ),
  );
}

/** Every provider registered for an issuer (one per audience): what a token's `iss` finds. */
export async function findJwtProvidersByIssuer(issuer: string): Promise<JwtProviderItem[]> {
  const result = await dynamoClient().send(
    new QueryCommand({
      TableName: tables.control,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: marshall({ ':pk': jwtProviderKey.issuer(issuer) }),
    }),
  );
  return (result.Items ?? []).map((item) => strip(unmarshall(item)));
}

/** One provider of an organisation, by id. */
export async function findJwtProviderItem(organisationId: string, id: string): Promise<JwtProviderItem | undefined> {
  const result = await dynamoClient().send(
    new QueryCommand({
      TableName: tables.control,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :id',
      ExpressionAttributeValues: marshall({ ':pk': jwtProviderKey.organisationList(organisationId), ':id': id }),
    }),
  );
  const item = result.Items?.[0];
  return item ? strip(unmarshall(item)) : undefined;
}

/** Every provider of an organisation, newest first (an organisation holds a handful). */
export async function listJwtProviderItems(organisationId: string): Promise<JwtProviderItem[]> {
  return (await queryAllNewestFirst(tables.control, jwtProviderKey.organisationList(organisationId))).map(strip);
}

function strip(item: Record<string, unknown>): JwtProviderItem {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...fields } = item;
  return fields as unknown as JwtProviderItem;
}
