/**
 * The lean GetItem and Query of the hot paths against the DynamoDB emulator: they must read what
 * the SDK reads, attribute types and all, and fail the way their callers can tell.
 */
import { randomBytes } from 'node:crypto';
import { GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../../lib/store/clients';
import { getItemFast, queryPageFast, updateItemFast } from '../../lib/store/lean-dynamo';
import { connectToGatewayStore, stateTable } from '../support/gateway-store';

connectToGatewayStore();

const newKey = (): Record<string, AttributeValue> => ({ pk: { S: `FASTGET#${randomBytes(6).toString('hex')}` }, sk: { S: 'item' } });

async function sdkGet(key: Record<string, AttributeValue>): Promise<Record<string, AttributeValue> | undefined> {
  const { Item } = await dynamoClient().send(new GetItemCommand({ TableName: stateTable, Key: key, ConsistentRead: true }));
  return Item;
}

/** A partition of `count` items, each with bytes and an attribute the Query's projection leaves out. */
const partition = async (count: number) => {
  const pk = `FASTQUERY#${randomBytes(6).toString('hex')}`;
  for (let i = 0; i < count; i++)
    await dynamoClient().send(
      new PutItemCommand({
        TableName: stateTable,
        Item: { pk: { S: pk }, sk: { S: `i${i}` }, n: { N: String(i) }, bytes: { B: randomBytes(i + 1) }, extra: { S: 'not projected' } },
      }),
    );
  return pk;
};

describe('queryPageFast', () => {
  it('reads a page as the SDK reads it: order, limit, projection and bytes', async () => {
    const pk = await partition(5);
    const input = {
      TableName: stateTable,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: pk } },
      ProjectionExpression: 'sk, n, bytes',
      ScanIndexForward: false,
      Limit: 3,
    };
    const fast = await queryPageFast(input);
    const sdk = (await dynamoClient().send(new QueryCommand(input))).Items;
    expect(fast).toEqual(sdk);
    expect(fast.map((item) => item.sk!.S)).toEqual(['i4', 'i3', 'i2']);
    expect(fast[0]!.extra).toBeUndefined();
    expect(fast[0]!.bytes!.B).toBeInstanceOf(Uint8Array);
  });

  it('answers an empty page for an empty partition, and names the operation in an error', async () => {
    expect(
      await queryPageFast({ TableName: stateTable, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: 'FASTQUERY#none' } } }),
    ).toEqual([]);
    const table = `no-such-table-${randomBytes(4).toString('hex')}`;
    await expect(queryPageFast({ TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: 'x' } } })).rejects.toThrow(
      new RegExp(`Query on ${table} failed with ResourceNotFoundException`),
    );
  });
});

describe('updateItemFast', () => {
  it('adds as the SDK adds, and answers the attributes ReturnValues asks for', async () => {
    const key = newKey();
    const add = (amount: number) => ({
      TableName: stateTable,
      Key: key,
      UpdateExpression: 'ADD #n :amount SET tag = :tag',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':amount': { N: String(amount) }, ':tag': { B: Buffer.from([1, 2]) } },
      ReturnValues: 'UPDATED_NEW' as const,
    });
    expect(await updateItemFast(add(5))).toEqual({ n: { N: '5' }, tag: { B: new Uint8Array([1, 2]) } });
    expect((await updateItemFast(add(2)))?.n).toEqual({ N: '7' });
    expect((await dynamoClient().send(new UpdateItemCommand(add(3)))).Attributes?.n).toEqual({ N: '10' });
    expect(await updateItemFast({ ...add(1), ReturnValues: 'NONE' })).toBeUndefined();
    expect((await sdkGet(key))?.n).toEqual({ N: '11' });
  });

  it('fails a condition the way the store tells apart', async () => {
    const failure = updateItemFast({
      TableName: stateTable,
      Key: newKey(),
      UpdateExpression: 'SET x = :x',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':x': { S: 'x' } },
    });
    await expect(failure).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
  });
});

describe('getItemFast', () => {
  it('reads every attribute type as the SDK reads it', async () => {
    const key = newKey();
    // Bytes of every value, in sizes that need base64 padding and none, and a body-sized one.
    const bytes = [randomBytes(1), randomBytes(2), randomBytes(3), randomBytes(64 * 1024)];
    const item: Record<string, AttributeValue> = {
      ...key,
      text: { S: 'ünïcødé ✓ "quoted" \\ back' },
      number: { N: '1764106000123' },
      fraction: { N: '-0.125' },
      body: { B: bytes[3]! },
      small: { B: bytes[0]! },
      yes: { BOOL: true },
      no: { BOOL: false },
      nothing: { NULL: true },
      map: { M: { inner: { S: 'x' }, bytes: { B: bytes[1]! }, deeper: { M: { list: { L: [{ B: bytes[2]! }, { N: '7' }] } } } } },
      list: { L: [{ S: 'a' }, { N: '1' }, { BOOL: false }, { NULL: true }, { B: bytes[0]! }, { M: {} }, { L: [] }] },
      strings: { SS: ['a', 'b'] },
      numbers: { NS: ['1', '2.5'] },
      binaries: { BS: [bytes[0]!, bytes[1]!] },
    };
    await dynamoClient().send(new PutItemCommand({ TableName: stateTable, Item: item }));

    const fast = await getItemFast(stateTable, key, { consistent: true });
    const sdk = await sdkGet(key);
    expect(sdk).toBeDefined();
    expect(fast).toEqual(sdk);
    expect(fast!.body!.B).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(fast!.body!.B!).equals(bytes[3]!)).toBe(true);
    // Without ConsistentRead the emulator answers the same; on AWS the read is eventually consistent.
    expect(await getItemFast(stateTable, key)).toEqual(sdk);
  });

  it('answers undefined for a missing item, as the SDK does', async () => {
    const key = newKey();
    expect(await sdkGet(key)).toBeUndefined();
    expect(await getItemFast(stateTable, key, { consistent: true })).toBeUndefined();
  });

  it('throws with DynamoDB error type for an error answer', async () => {
    const table = `no-such-table-${randomBytes(4).toString('hex')}`;
    const failure = getItemFast(table, newKey());
    // The message is this module's own (the SDK's would not name the table): the read did not go through the SDK.
    await expect(failure).rejects.toThrow(new RegExp(`GetItem on ${table} failed with ResourceNotFoundException`));
    await expect(failure).rejects.toMatchObject({ name: 'ResourceNotFoundException', $metadata: { httpStatusCode: 400 } });
  });

  it('throws for a key the table does not have', async () => {
    await expect(getItemFast(stateTable, { id: { S: 'x' } })).rejects.toThrow(/ValidationException/);
  });

  it('hands the read to the SDK when the address guard refuses the endpoint', async () => {
    const key = newKey();
    await dynamoClient().send(new PutItemCommand({ TableName: stateTable, Item: { ...key, text: { S: 'guarded' } } }));
    // Outside local mode the guard refuses loopback, where the emulator listens.
    process.env.GATEWAY_MODE = 'lambda';
    try {
      expect(await getItemFast(stateTable, key, { consistent: true })).toEqual(await sdkGet(key));
      const table = `no-such-table-${randomBytes(4).toString('hex')}`;
      const failure = getItemFast(table, newKey());
      await expect(failure).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
      await expect(failure).rejects.not.toThrow(/GetItem on/);
    } finally {
      process.env.GATEWAY_MODE = 'local';
    }
    // Back in local mode the environment is the same, so the SDK keeps the reads: only a change of endpoint or keys starts over.
    expect(await getItemFast(stateTable, key, { consistent: true })).toEqual(await sdkGet(key));
  });
});

// Last: once the guard hands the calls to the SDK, this process's lean client keeps them there.
describe('queryPageFast behind the address guard', () => {
  it('hands the Query to the SDK when the address guard refuses the endpoint', async () => {
    const pk = await partition(2);
    const input = { TableName: stateTable, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: pk } } };
    process.env.GATEWAY_MODE = 'lambda';
    try {
      expect(await queryPageFast(input)).toEqual((await dynamoClient().send(new QueryCommand(input))).Items);
    } finally {
      process.env.GATEWAY_MODE = 'local';
    }
  });
});
