/**
 * lib/local/template/provision.ts against the emulators: the resources of the real serverless.yml (stage
 * 'test'), their Ref/GetAtt values, the dead-letter redrive, idempotence (twice, and two at once),
 * intrinsics and dependency order, and the errors a user would meet.
 * Self-contained: starts its own emulators in a temporary directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DescribeTableCommand, DescribeTimeToLiveCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, HeadBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ChangeMessageVisibilityCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulators, type RunningEmulators } from '../../lib/local/emulators/emulators';
import { provisionResources, type ProvisionedResources } from '../../lib/local/template/provision';
import { loadServerlessConfig, resolveIntrinsics, type ServerlessConfig } from '../../lib/local/template/serverless-config';
import { dynamoClient, resetClients, s3Client, sqsClient } from '../../lib/store/clients';
import { repoRoot } from '../support/repo-root';

const region = 'us-east-1';
let root: string;
let emulators: RunningEmulators;
let config: ServerlessConfig;
let provisioned: ProvisionedResources;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'gateway-provision-'));
  emulators = await startEmulators({ dataDir: root });
  process.env.GATEWAY_DYNAMODB_ENDPOINT = emulators.endpoints.dynamodb;
  process.env.GATEWAY_SQS_ENDPOINT = emulators.endpoints.sqs;
  process.env.GATEWAY_S3_ENDPOINT = emulators.endpoints.s3;
  resetClients();
  config = loadServerlessConfig({ file: path.join(repoRoot, 'serverless.yml'), stage: 'test', region });
  provisioned = await provisionResources(config.resources, { region });
});

afterAll(async () => {
  resetClients();
  await emulators?.stop();
  await rm(root, { recursive: true, force: true });
});

async function queueAttributes(queueUrl: string): Promise<Record<string, string>> {
  const { Attributes } = await sqsClient().send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }));
  return Attributes ?? {};
}

describe('the resources of serverless.yml', () => {
  it('creates the three tables with their keys, GSIs and billing mode', async () => {
    for (const [logicalId, suffix, indexes] of [
      ['ControlTable', 'control', ['gsi1']],
      ['StateTable', 'state', []],
      ['LogsTable', 'logs', ['gsi1', 'gsi2']],
    ] as const) {
      const name = provisioned.ref(logicalId);
      expect(name).toBe(`llm-gateway-test-${suffix}`);
      expect(provisioned.getAtt(logicalId, 'Arn')).toBe(`arn:aws:dynamodb:${region}:000000000000:table/${name}`);
      const { Table } = await dynamoClient().send(new DescribeTableCommand({ TableName: name }));
      expect(Table?.TableStatus).toBe('ACTIVE');
      expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
      expect(Table?.KeySchema).toEqual([
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ]);
      if (indexes.length > 0) {
        expect(Table?.GlobalSecondaryIndexes).toHaveLength(indexes.length);
        for (const index of indexes) {
          expect(Table?.GlobalSecondaryIndexes?.find((declared) => declared.IndexName === index)).toMatchObject({
            IndexName: index,
            IndexStatus: 'ACTIVE',
            KeySchema: [
              { AttributeName: `${index}pk`, KeyType: 'HASH' },
              { AttributeName: `${index}sk`, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          });
        }
      } else {
        expect(Table?.GlobalSecondaryIndexes).toBeUndefined();
      }
    }
  });

  it('accepts TimeToLiveSpecification although dynalite has no TTL (items are not expired locally)', async () => {
    const { TimeToLiveDescription } = await dynamoClient().send(new DescribeTimeToLiveCommand({ TableName: provisioned.ref('StateTable') }));
    // If the emulator ever implements UpdateTimeToLive this becomes ENABLED; until then readers must
    // treat an item whose expiresAt has passed as absent (DynamoDB deletes expired items lazily too).
    expect(TimeToLiveDescription?.TimeToLiveStatus).toBe('DISABLED');
  });

  it('creates the queues with their attributes and resolves the dead-letter ARN', async () => {
    const batchUrl = provisioned.ref('BatchQueue');
    expect(batchUrl).toMatch(/^http:\/\/.+\/000000000000\/llm-gateway-test-batch$/);
    expect(provisioned.getAtt('BatchQueue', 'QueueUrl')).toBe(batchUrl);
    expect(provisioned.getAtt('BatchQueue', 'QueueName')).toBe('llm-gateway-test-batch');

    const dlqArn = provisioned.getAtt('BatchDeadLetterQueue', 'Arn');
    expect(dlqArn).toMatch(/^arn:aws:sqs:[a-z0-9-]+:000000000000:llm-gateway-test-batch-dlq$/);
    const batch = await queueAttributes(batchUrl);
    expect(batch.VisibilityTimeout).toBe('960');
    expect(JSON.parse(batch.RedrivePolicy)).toEqual({ deadLetterTargetArn: dlqArn, maxReceiveCount: 5 });
    expect(batch.QueueArn).toBe(provisioned.getAtt('BatchQueue', 'Arn'));

    const dlq = await queueAttributes(provisioned.ref('BatchDeadLetterQueue'));
    expect(dlq.MessageRetentionPeriod).toBe('1209600');

    const fineTune = await queueAttributes(provisioned.ref('FineTuneQueue'));
    expect(fineTune.VisibilityTimeout).toBe('960');
    expect(JSON.parse(fineTune.RedrivePolicy).deadLetterTargetArn).toBe(provisioned.getAtt('FineTuneDeadLetterQueue', 'Arn'));
  });

  it('moves a message received more than maxReceiveCount times to the dead-letter queue', async () => {
    const queueUrl = provisioned.ref('FineTuneQueue');
    const dlqUrl = provisioned.ref('FineTuneDeadLetterQueue');
    await sqsClient().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'poison' }));
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      const { Messages = [] } = await sqsClient().send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }),
      );
      expect(Messages.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount])).toEqual([['poison', String(attempt)]]);
      // The handler "failed": make it visible again at once instead of after 120 s.
      await sqsClient().send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: Messages[0].ReceiptHandle, VisibilityTimeout: 0 }));
    }
    const sixth = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
    expect(sixth.Messages ?? []).toEqual([]);
    const dead = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: dlqUrl }));
    expect(dead.Messages?.map((m) => m.Body)).toEqual(['poison']);
  });

  it('creates the bucket with the account in its name', async () => {
    const bucket = provisioned.ref('DataBucket');
    expect(bucket).toBe('llm-gateway-test-000000000000-data');
    expect(provisioned.getAtt('DataBucket', 'Arn')).toBe(`arn:aws:s3:::${bucket}`);
    await expect(s3Client().send(new HeadBucketCommand({ Bucket: bucket }))).resolves.toBeDefined();
  });

  it('gives the KMS key and the REST API fixed local values and refuses AWS-only resources by name', () => {
    expect(provisioned.ref('SecretsKey')).toBe('local-master-key');
    expect(provisioned.getAtt('SecretsKey', 'Arn')).toBe(`arn:aws:kms:${region}:000000000000:key/local-master-key`);
    expect(provisioned.ref('ApiGatewayRestApi')).toBe('local');
    expect(() => provisioned.ref('MissingRouteGatewayResponse')).toThrow(/AWS::ApiGateway::GatewayResponse, which exists only on AWS/);
    expect(() => provisioned.ref('NoSuchThing')).toThrow(/no resource named NoSuchThing/);
    expect(() => provisioned.getAtt('BatchQueue', 'Nope')).toThrow(/no attribute Nope.*Arn/);
  });

  it('resolves provider.environment the way the runtime sets it for the handlers', () => {
    const environment = resolveIntrinsics(config.environment, { ...provisioned, pseudo: { 'AWS::Region': region } }) as Record<string, string>;
    expect(environment).toMatchObject({
      GATEWAY_CONTROL_TABLE: 'llm-gateway-test-control',
      GATEWAY_STATE_TABLE: 'llm-gateway-test-state',
      GATEWAY_LOGS_TABLE: 'llm-gateway-test-logs',
      GATEWAY_BUCKET: 'llm-gateway-test-000000000000-data',
      GATEWAY_BATCH_QUEUE_URL: provisioned.ref('BatchQueue'),
      GATEWAY_FINETUNE_QUEUE_URL: provisioned.ref('FineTuneQueue'),
      GATEWAY_KMS_KEY_ID: 'local-master-key',
    });
  });
});

describe('idempotence', () => {
  it('provisioning again (and twice at once) keeps names, data, objects and queued messages', async () => {
    const table = provisioned.ref('ControlTable');
    const bucket = provisioned.ref('DataBucket');
    const queueUrl = provisioned.ref('BatchQueue');
    await dynamoClient().send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'org#1' }, sk: { S: 'meta' } } }));
    await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: 'kept.txt', Body: 'kept' }));
    await sqsClient().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'still queued' }));

    const again = await Promise.all([provisionResources(config.resources, { region }), provisionResources(config.resources, { region })]);
    for (const result of again) {
      for (const id of ['ControlTable', 'StateTable', 'LogsTable', 'BatchQueue', 'BatchDeadLetterQueue', 'FineTuneQueue', 'DataBucket']) {
        expect(result.ref(id)).toBe(provisioned.ref(id));
      }
      expect(result.getAtt('BatchDeadLetterQueue', 'Arn')).toBe(provisioned.getAtt('BatchDeadLetterQueue', 'Arn'));
    }

    const { Item } = await dynamoClient().send(new GetItemCommand({ TableName: table, Key: { pk: { S: 'org#1' }, sk: { S: 'meta' } } }));
    expect(Item).toBeDefined();
    const object = await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key: 'kept.txt' }));
    expect(await object.Body!.transformToString()).toBe('kept');
    const { Messages = [] } = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
    expect(Messages.map((m) => m.Body)).toEqual(['still queued']);
  });

  it('lets two processes race to create the same new resources', async () => {
    const fresh: ServerlessConfig['resources'] = {
      RaceTable: {
        Type: 'AWS::DynamoDB::Table',
        Properties: {
          TableName: 'race-table',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        },
      },
      RaceDeadLetterQueue: { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'race-dlq' } },
      RaceQueue: {
        Type: 'AWS::SQS::Queue',
        Properties: { QueueName: 'race-queue', RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['RaceDeadLetterQueue', 'Arn'] }, maxReceiveCount: 2 } },
      },
      RaceBucket: { Type: 'AWS::S3::Bucket', Properties: { BucketName: 'race-bucket' } },
    };
    const results = await Promise.all([1, 2, 3].map(() => provisionResources(fresh, { region })));
    for (const result of results) {
      expect(result.ref('RaceTable')).toBe('race-table');
      expect(result.ref('RaceQueue')).toBe(results[0].ref('RaceQueue'));
      expect(result.ref('RaceBucket')).toBe('race-bucket');
    }
    const { Table } = await dynamoClient().send(new DescribeTableCommand({ TableName: 'race-table' }));
    expect(Table?.TableStatus).toBe('ACTIVE');
  });

  it('updates the attributes of a queue whose definition changed', async () => {
    const queue = (visibility: number) => ({
      ChangingQueue: { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'changing-queue', VisibilityTimeout: visibility, SqsManagedSseEnabled: true } },
    });
    const first = await provisionResources(queue(30), { region });
    const second = await provisionResources(queue(45), { region });
    expect(second.ref('ChangingQueue')).toBe(first.ref('ChangingQueue'));
    expect((await queueAttributes(second.ref('ChangingQueue'))).VisibilityTimeout).toBe('45');
  });

  it('refuses a table whose keys or indexes changed, saying how to recover', async () => {
    const control = config.resources.ControlTable;
    const changed = structuredClone(control);
    changed.Properties!.GlobalSecondaryIndexes.push({
      IndexName: 'gsi2',
      KeySchema: [{ AttributeName: 'gsi1sk', KeyType: 'HASH' }],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    });
    await expect(provisionResources({ ControlTable: changed }, { region })).rejects.toThrow(
      /ControlTable.*another shape.*global secondary index gsi2 is missing.*delete the local data directory/s,
    );
  });
});

describe('intrinsics and order', () => {
  it('resolves Fn::Sub, Ref and Fn::GetAtt in properties, creating referenced resources first', async () => {
    // Declared before the queues it references, and with long-form intrinsics as the config reader yields them.
    const resources: ServerlessConfig['resources'] = {
      OrdersQueue: {
        Type: 'AWS::SQS::Queue',
        Properties: {
          QueueName: { 'Fn::Sub': '${AWS::StackName}-orders.fifo' },
          FifoQueue: true,
          ContentBasedDeduplication: true,
          DelaySeconds: 2,
          KmsMasterKeyId: { Ref: 'Key' },
          RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['OrdersDeadLetterQueue', 'Arn'] }, maxReceiveCount: '3' },
        },
      },
      OrdersDeadLetterQueue: {
        Type: 'AWS::SQS::Queue',
        Properties: { QueueName: { 'Fn::Sub': ['${Prefix}-orders-dlq.fifo', { Prefix: { Ref: 'AWS::StackName' } }] }, FifoQueue: 'true' },
      },
      Uploads: {
        Type: 'AWS::S3::Bucket',
        Properties: { BucketName: { 'Fn::Sub': 'uploads-${AWS::AccountId}-${AWS::Region}-${OrdersTable}' } },
      },
      OrdersTable: {
        Type: 'AWS::DynamoDB::Table',
        Properties: {
          TableName: { 'Fn::Join': ['-', [{ Ref: 'AWS::StackName' }, 'orders']] },
          BillingMode: 'PROVISIONED',
          ProvisionedThroughput: { ReadCapacityUnits: '2', WriteCapacityUnits: 2 },
          AttributeDefinitions: [
            { AttributeName: 'id', AttributeType: 'S' },
            { AttributeName: 'at', AttributeType: 'N' },
          ],
          KeySchema: [
            { AttributeName: 'id', KeyType: 'HASH' },
            { AttributeName: 'at', KeyType: 'RANGE' },
          ],
          LocalSecondaryIndexes: [
            {
              IndexName: 'byTime',
              KeySchema: [
                { AttributeName: 'id', KeyType: 'HASH' },
                { AttributeName: 'at', KeyType: 'RANGE' },
              ],
              Projection: { ProjectionType: 'KEYS_ONLY' },
            },
          ],
          TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        },
      },
      Key: { Type: 'AWS::KMS::Key', Properties: {} },
      Alarm: { Type: 'AWS::CloudWatch::Alarm', Properties: { AlarmActions: [{ Ref: 'SomethingOnlyOnAws' }] } },
    };
    const result = await provisionResources(resources, { region, stackName: 'shop-test', accountId: '123456789012' });

    expect(result.getAtt('OrdersQueue', 'QueueName')).toBe('shop-test-orders.fifo');
    const orders = await queueAttributes(result.ref('OrdersQueue'));
    expect(orders).toMatchObject({ FifoQueue: 'true', ContentBasedDeduplication: 'true', DelaySeconds: '2', KmsMasterKeyId: 'local-master-key' });
    expect(JSON.parse(orders.RedrivePolicy)).toEqual({ deadLetterTargetArn: result.getAtt('OrdersDeadLetterQueue', 'Arn'), maxReceiveCount: 3 });
    expect(result.getAtt('OrdersDeadLetterQueue', 'QueueName')).toBe('shop-test-orders-dlq.fifo');

    expect(result.ref('OrdersTable')).toBe('shop-test-orders');
    expect(result.getAtt('OrdersTable', 'Arn')).toBe('arn:aws:dynamodb:us-east-1:123456789012:table/shop-test-orders');
    const { Table } = await dynamoClient().send(new DescribeTableCommand({ TableName: 'shop-test-orders' }));
    expect(Table?.ProvisionedThroughput).toMatchObject({ ReadCapacityUnits: 2, WriteCapacityUnits: 2 });
    expect(Table?.LocalSecondaryIndexes?.map((i) => i.IndexName)).toEqual(['byTime']);

    expect(result.ref('Uploads')).toBe('uploads-123456789012-us-east-1-shop-test-orders');
    await expect(s3Client().send(new HeadBucketCommand({ Bucket: result.ref('Uploads') }))).resolves.toBeDefined();
    expect(() => result.ref('Alarm')).toThrow(/AWS::CloudWatch::Alarm, which exists only on AWS/);
  });

  it('names the resources of a reference cycle', async () => {
    const cycle: ServerlessConfig['resources'] = {
      A: {
        Type: 'AWS::SQS::Queue',
        Properties: { QueueName: 'cycle-a', RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['B', 'Arn'] }, maxReceiveCount: 1 } },
      },
      B: {
        Type: 'AWS::SQS::Queue',
        Properties: { QueueName: 'cycle-b', RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': 'A.Arn' }, maxReceiveCount: 1 } },
      },
    };
    await expect(provisionResources(cycle, { region })).rejects.toThrow(/cycle: A, B/);
  });

  it('says which resource a property references when it exists only on AWS', async () => {
    const resources: ServerlessConfig['resources'] = {
      Topic: { Type: 'AWS::SNS::Topic', Properties: {} },
      Q: { Type: 'AWS::SQS::Queue', Properties: { QueueName: { 'Fn::Sub': 'q-${Topic.TopicName}' } } },
    };
    await expect(provisionResources(resources, { region })).rejects.toThrow(/Cannot provision Q \(AWS::SQS::Queue\): Topic is an AWS::SNS::Topic/);
  });

  it('never provisions without an emulator endpoint (it would create resources in an AWS account)', async () => {
    const saved = process.env.GATEWAY_SQS_ENDPOINT;
    delete process.env.GATEWAY_SQS_ENDPOINT;
    try {
      await expect(provisionResources({ Q: { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'q' } } }, { region })).rejects.toThrow(
        /GATEWAY_SQS_ENDPOINT is not set/,
      );
    } finally {
      process.env.GATEWAY_SQS_ENDPOINT = saved;
    }
  });
});
