import { describe, expect, it } from 'vitest';
import { countDynamoCall, emptyCounts, estimatedUnits, indexWriteUnits, itemBytes, s3Kind, subtractCounts } from '../../../scripts/size/counting-proxy';

const indexes = { logs: [{ hashKey: 'gsi1pk', rangeKey: 'gsi1sk', projectsAll: true }], control: [{ hashKey: 'gsi1pk', projectsAll: false }] };

describe('DynamoDB request units as counted at the endpoint', () => {
  it('takes the answer’s consumed capacity, with the minimum DynamoDB bills a read that finds nothing', () => {
    const counts = emptyCounts();
    countDynamoCall(counts, 'Query', {}, { ConsumedCapacity: { CapacityUnits: 0 } });
    countDynamoCall(counts, 'GetItem', { ConsistentRead: true }, { ConsumedCapacity: { CapacityUnits: 0 } });
    countDynamoCall(counts, 'BatchWriteItem', {}, { ConsumedCapacity: [{ CapacityUnits: 3 }, { CapacityUnits: 2 }] });
    expect(counts.readUnits).toBe(1.5);
    expect(counts.writeUnits).toBe(5);
    expect(counts.estimatedUnits).toBe(0);
    expect(counts.calls).toEqual({ Query: 1, GetItem: 1, BatchWriteItem: 1 });
  });

  it('estimates a call whose answer has no capacity: a transaction at twice its items’ units', () => {
    const big = { pk: { S: 'x' }, body: { S: 'y'.repeat(1500) } };
    const body = { TransactItems: [{ Put: { TableName: 'logs', Item: big } }, { Update: { TableName: 'logs' } }] };
    expect(estimatedUnits('TransactWriteItems', body)).toBe(2 * 2 + 2 * 1);
    const counts = emptyCounts();
    countDynamoCall(counts, 'TransactWriteItems', body, undefined);
    expect(counts).toMatchObject({ writeUnits: 6, estimatedUnits: 6 });
  });

  it('adds the writes of the global secondary indexes an item is in', () => {
    const item = { pk: { S: 'a' }, gsi1pk: { S: 'b' }, gsi1sk: { S: 'c' }, text: { S: 'z'.repeat(2000) } };
    expect(indexWriteUnits('PutItem', { TableName: 'logs', Item: item }, indexes)).toBe(2);
    expect(indexWriteUnits('PutItem', { TableName: 'logs', Item: { pk: { S: 'a' } } }, indexes)).toBe(0);
    expect(indexWriteUnits('PutItem', { TableName: 'control', Item: item }, indexes)).toBe(1);
    expect(indexWriteUnits('UpdateItem', { TableName: 'logs', UpdateExpression: 'SET #k = :k', ExpressionAttributeNames: { '#k': 'gsi1sk' } }, indexes)).toBe(
      1,
    );
    expect(indexWriteUnits('UpdateItem', { TableName: 'logs', UpdateExpression: 'ADD #n :one', ExpressionAttributeNames: { '#n': 'count' } }, indexes)).toBe(0);
    expect(indexWriteUnits('BatchWriteItem', { RequestItems: { logs: [{ PutRequest: { Item: item } }, { DeleteRequest: {} }] } }, indexes)).toBe(2);
  });

  it('sizes items by names and values', () => {
    expect(itemBytes({ ab: { S: 'xyz' }, n: { N: '12345' }, ok: { BOOL: true } })).toBe(2 + 3 + 1 + 4 + 2 + 1);
  });

  it('subtracts a snapshot from a later one', () => {
    const before = emptyCounts();
    countDynamoCall(before, 'PutItem', {}, { ConsumedCapacity: { CapacityUnits: 1 } });
    const after = structuredClone(before);
    countDynamoCall(after, 'PutItem', {}, { ConsumedCapacity: { CapacityUnits: 2 } });
    expect(subtractCounts(after, before)).toMatchObject({ calls: { PutItem: 1 }, units: { PutItem: 2 }, writeUnits: 2 });
  });
});

describe('S3 requests as billed', () => {
  it('puts writes and lists in one tier and gets in the other', () => {
    expect(s3Kind('PUT', '/bucket/key')).toBe('write');
    expect(s3Kind('GET', '/bucket/files/key')).toBe('read');
    expect(s3Kind('GET', '/bucket?list-type=2&prefix=x')).toBe('write');
    expect(s3Kind('HEAD', '/bucket/key')).toBe('read');
  });
});
