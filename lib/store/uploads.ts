import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { uploadKey } from './keys';
import { tables } from './tables';

/**
 * `pending` takes parts; `completing` is held while one complete assembles the file, so a second
 * complete or a cancel meanwhile is refused instead of racing it; `completed` and `cancelled` are final.
 */
export type UploadState = 'pending' | 'completing' | 'completed' | 'cancelled';

export interface UploadPartRecord {
  bytes: number;
  created_at: number;
}

/** An upload of the Uploads API as stored. */
export interface UploadItem {
  id: string;
  workspace_id: string;
  /** As the client sent it: data, never part of a key. */
  filename: string;
  purpose: string;
  mime_type: string;
  /** The size the client announced; the parts named on complete must add up to it. */
  bytes: number;
  created_at: number;
  expires_at: number;
  state: UploadState;
  /** The id the completed file gets, chosen up front: the S3 multipart upload writes to its key. */
  file_id: string;
  /** S3's id of the multipart upload that becomes the file's object. */
  s3_upload_id: string;
  parts: Record<string, UploadPartRecord>;
}

export async function putUploadItem(item: UploadItem): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall({ ...uploadKey.item(item.workspace_id, item.id), ...item }),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
}

export async function getUploadItem(workspaceId: string, id: string): Promise<UploadItem | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(uploadKey.item(workspaceId, id)), ConsistentRead: true }),
  );
  if (!result.Item) return undefined;
  const { pk: _pk, sk: _sk, ...fields } = unmarshall(result.Item);
  return fields as UploadItem;
}

/**
 * Adds a part while the upload is pending, unexpired and below `maxParts` parts; false when any of
 * these no longer holds (the caller reads the upload again to say which). One conditional write, so
 * a part never lands on an upload that a complete or cancel has just claimed.
 */
export function addUploadPart(workspaceId: string, id: string, partId: string, part: UploadPartRecord, now: number, maxParts: number): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.control,
        Key: marshall(uploadKey.item(workspaceId, id)),
        UpdateExpression: 'SET parts.#part = :part',
        ConditionExpression: 'attribute_exists(pk) AND #state = :pending AND expires_at > :now AND size(parts) < :max',
        ExpressionAttributeNames: { '#part': partId, '#state': 'state' },
        ExpressionAttributeValues: marshall({ ':part': part, ':pending': 'pending', ':now': now, ':max': maxParts }),
      }),
    ),
  );
}

/** Moves the upload from one state to the next; false when it was not in `from` (someone else moved it first). */
export function moveUploadState(workspaceId: string, id: string, from: UploadState, to: UploadState): Promise<boolean> {
  return writeIfCondition(() =>
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.control,
        Key: marshall(uploadKey.item(workspaceId, id)),
        UpdateExpression: 'SET #state = :to',
        ConditionExpression: 'attribute_exists(pk) AND #state = :from',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: marshall({ ':from': from, ':to': to }),
      }),
    ),
  );
}
