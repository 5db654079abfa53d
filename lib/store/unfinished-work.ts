/**
 * Markers of unfinished long work (batches, fine-tuning jobs): one item per piece of work under one
 * partition per kind, written when the work is created and deleted when it ends. A starting runtime
 * reads them to re-enqueue work whose queue messages were lost; DynamoDB is the source of truth.
 */
import { DeleteItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { tables } from './tables';

export async function markUnfinished(partition: string, id: string, workspaceId: string): Promise<void> {
  await dynamoClient().send(new PutItemCommand({ TableName: tables.control, Item: marshall({ pk: partition, sk: id, workspace_id: workspaceId }) }));
}

export async function clearUnfinished(partition: string, id: string): Promise<void> {
  await dynamoClient().send(new DeleteItemCommand({ TableName: tables.control, Key: marshall({ pk: partition, sk: id }) }));
}

export async function listUnfinished(partition: string): Promise<{ id: string; workspace_id: string }[]> {
  const found: { id: string; workspace_id: string }[] = [];
  let start: Record<string, any> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: tables.control,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': partition }),
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      const { sk, workspace_id } = unmarshall(item);
      found.push({ id: sk, workspace_id });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}
