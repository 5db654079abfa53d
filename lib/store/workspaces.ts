import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { workspaceKey } from './keys';
import { queryAllNewestFirst } from './newest-first';
import { tables } from './tables';

export type WorkspaceStatus = 'active' | 'archived';

/** How the workspace's semantic cache embeds the last user message, and how alike two must be. */
export interface WorkspaceCacheSettings {
  /** A catalog provider of the workspace, `@slug`. */
  embedding_provider: string;
  embedding_model: string;
  /** Cosine similarity at or above which a stored answer is a semantic hit. */
  similarity_threshold: number;
}

/** A workspace: the boundary every key, config, catalog entry and log belongs to. */
export interface WorkspaceRecord {
  id: string;
  organisation_id: string;
  name: string;
  slug: string;
  description: string | null;
  status: WorkspaceStatus;
  /** The organisation's first workspace: owners act in it, and it cannot be archived. */
  is_default: boolean;
  created_at: number;
  last_updated_at: number;
  archived_at: number | null;
  /** Semantic cache settings; null until an admin sets them. */
  cache: WorkspaceCacheSettings | null;
}

/** Creates the workspace; false when one with its id exists already. */
export function putWorkspaceItem(record: WorkspaceRecord): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall({ ...workspaceKey(record.id), ...listing(record.organisation_id, record.id), ...record }, { removeUndefinedValues: true }),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
}

export async function getWorkspaceItem(id: string): Promise<WorkspaceRecord | undefined> {
  const found = await dynamoClient().send(new GetItemCommand({ TableName: tables.control, Key: marshall(workspaceKey(id)), ConsistentRead: true }));
  return found.Item ? toRecord(unmarshall(found.Item)) : undefined;
}

/**
 * Every workspace of an organisation, newest first. An organisation has tens of workspaces, not
 * thousands, so the listing is read whole and filtered here rather than paged by the table.
 */
export async function listWorkspaceItems(organisationId: string): Promise<WorkspaceRecord[]> {
  return (await queryAllNewestFirst(tables.control, workspaceKey.organisationList(organisationId))).map(toRecord);
}

/** Changes a workspace of the organisation; undefined when it has none with that id. */
export async function updateWorkspaceItem(
  organisationId: string,
  id: string,
  changes: Partial<Pick<WorkspaceRecord, 'name' | 'slug' | 'description' | 'status' | 'archived_at' | 'cache'>>,
  now: number,
): Promise<WorkspaceRecord | undefined> {
  const values: Record<string, unknown> = { ':org': organisationId, ':now': now };
  const names: Record<string, string> = {};
  const sets = ['last_updated_at = :now'];
  for (const [field, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  let result;
  const written = await writeIfCondition(async () => {
    result = await dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.control,
        Key: marshall(workspaceKey(id)),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk) AND organisation_id = :org',
        ExpressionAttributeNames: Object.keys(names).length > 0 ? names : undefined,
        ExpressionAttributeValues: marshall(values),
        ReturnValues: 'ALL_NEW',
      }),
    );
  });
  return written && result ? toRecord(unmarshall((result as { Attributes: Record<string, any> }).Attributes)) : undefined;
}

/**
 * Makes a default workspace written before workspaces could be listed (or archived) look like
 * every other one: listed under its organisation, active, marked default. Changes nothing on the next call.
 */
export async function upgradeDefaultWorkspaceItem(organisationId: string, id: string): Promise<void> {
  await dynamoClient().send(
    new UpdateItemCommand({
      TableName: tables.control,
      Key: marshall(workspaceKey(id)),
      UpdateExpression:
        'SET gsi1pk = :pk, gsi1sk = :id, is_default = :yes, #status = if_not_exists(#status, :active), last_updated_at = if_not_exists(last_updated_at, created_at)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: marshall({ ':pk': workspaceKey.organisationList(organisationId), ':id': id, ':yes': true, ':active': 'active' }),
    }),
  );
}

function listing(organisationId: string, id: string) {
  return { gsi1pk: workspaceKey.organisationList(organisationId), gsi1sk: id };
}

function toRecord(item: Record<string, any>): WorkspaceRecord {
  return {
    id: item.id,
    organisation_id: item.organisation_id,
    name: item.name,
    slug: item.slug,
    description: item.description ?? null,
    status: item.status ?? 'active',
    is_default: item.is_default === true,
    created_at: item.created_at,
    last_updated_at: item.last_updated_at ?? item.created_at,
    archived_at: item.archived_at ?? null,
    cache: item.cache ?? null,
  };
}
