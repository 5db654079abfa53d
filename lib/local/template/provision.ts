/**
 * Creates the tables, queues and bucket that serverless.yml declares, in the emulators named by
 * `GATEWAY_DYNAMODB_ENDPOINT`, `GATEWAY_SQS_ENDPOINT` and `GATEWAY_S3_ENDPOINT` (through the same SDK
 * calls CloudFormation's resources amount to), and answers `Ref`/`Fn::GetAtt` of them with their local
 * names, URLs and ARNs.
 *
 * Safe to run on every start and by several processes at once: an existing resource is reused
 * (a queue whose attributes changed gets them set; a table whose keys or indexes differ is an error,
 * since DynamoDB cannot change those in place). Resources are created after the ones they reference,
 * independent ones in parallel.
 *
 * Supported: AWS::DynamoDB::Table, AWS::SQS::Queue, AWS::S3::Bucket; AWS::KMS::Key and the
 * framework's ApiGatewayRestApi resolve to fixed local values. Other types exist only on AWS: they
 * are skipped, and a reference to one is an error naming it.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
  type CreateTableCommandInput,
  type GlobalSecondaryIndex,
  type KeySchemaElement,
  type LocalSecondaryIndex,
  type Projection,
  type ProvisionedThroughput,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, GetQueueUrlCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { dynamoClient, endpointEnv, s3Client, sqsClient } from '../../store/clients';
import { resolveIntrinsics, type ServerlessConfig } from './serverless-config';

export interface ProvisionedResources {
  /** `Ref`: table name, queue URL, bucket name, local KMS key id. */
  ref(logicalId: string): string;
  /** `Fn::GetAtt`: ARNs, `QueueUrl`, `QueueName`, `StreamArn`, ... */
  getAtt(logicalId: string, attribute: string): string;
}

export interface ProvisionOptions {
  region: string;
  /** Account in the ARNs this module builds; default 000000000000. */
  accountId?: string;
  /** Value of the `AWS::StackName` pseudo parameter; default `local`. */
  stackName?: string;
}

type Resources = ServerlessConfig['resources'];
interface Outputs {
  ref: string;
  attributes: Record<string, string>;
}
interface Context {
  region: string;
  accountId: string;
  resolve(value: unknown): unknown;
}

export const LOCAL_KMS_KEY_ID = 'local-master-key';
const LOCAL_REST_API_ID = 'local';
const TABLE_ACTIVE_TIMEOUT_MS = 10_000;

const PROVISIONERS: Record<string, { endpoint: string; create(id: string, props: Record<string, unknown>, ctx: Context): Promise<Outputs> }> = {
  'AWS::DynamoDB::Table': { endpoint: endpointEnv.dynamodb, create: provisionTable },
  'AWS::SQS::Queue': { endpoint: endpointEnv.sqs, create: provisionQueue },
  'AWS::S3::Bucket': { endpoint: endpointEnv.s3, create: provisionBucket },
};

export async function provisionResources(resources: Resources, options: ProvisionOptions): Promise<ProvisionedResources> {
  const region = options.region;
  const accountId = options.accountId ?? '000000000000';
  const outputs = new Map<string, Outputs>();

  outputs.set('ApiGatewayRestApi', { ref: LOCAL_REST_API_ID, attributes: { RootResourceId: `${LOCAL_REST_API_ID}-root` } });
  for (const [logicalId, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::KMS::Key') {
      outputs.set(logicalId, {
        ref: LOCAL_KMS_KEY_ID,
        attributes: { Arn: `arn:aws:kms:${region}:${accountId}:key/${LOCAL_KMS_KEY_ID}`, KeyId: LOCAL_KMS_KEY_ID },
      });
    }
  }

  const lookup = (logicalId: string): Outputs => {
    const found = outputs.get(logicalId);
    if (found) return found;
    const resource = resources[logicalId];
    if (!resource) throw new Error(`serverless.yml declares no resource named ${logicalId}.`);
    if (!PROVISIONERS[resource.Type]) {
      throw new Error(`${logicalId} is an ${resource.Type}, which exists only on AWS: the local runtime does not create it, so it has no local value.`);
    }
    throw new Error(`${logicalId} is referenced before it was created.`);
  };
  const provisioned: ProvisionedResources = {
    ref: (logicalId) => lookup(logicalId).ref,
    getAtt: (logicalId, attribute) => {
      const value = lookup(logicalId).attributes[attribute];
      if (value === undefined) {
        const known = Object.keys(lookup(logicalId).attributes).join(', ');
        throw new Error(`${logicalId} has no attribute ${attribute} locally (it has: ${known}).`);
      }
      return value;
    },
  };
  const pseudo = {
    'AWS::Region': region,
    'AWS::AccountId': accountId,
    'AWS::StackName': options.stackName ?? 'local',
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
  };
  const ctx: Context = { region, accountId, resolve: (value) => resolveIntrinsics(value, { ...provisioned, pseudo }) };

  const pending = new Map<string, Set<string>>();
  for (const [logicalId, resource] of Object.entries(resources)) {
    const provisioner = PROVISIONERS[resource.Type];
    if (!provisioner) continue;
    if (!process.env[provisioner.endpoint]) {
      throw new Error(`${provisioner.endpoint} is not set: provisioning only creates resources in local emulators, never in an AWS account.`);
    }
    const dependencies = new Set([...references(resource.Properties ?? {})].filter((id) => id !== logicalId && PROVISIONERS[resources[id]?.Type ?? '']));
    pending.set(logicalId, dependencies);
  }

  // Creates in waves: everything whose dependencies exist, in parallel.
  while (pending.size > 0) {
    const ready = [...pending].filter(([, dependencies]) => [...dependencies].every((id) => outputs.has(id))).map(([id]) => id);
    if (ready.length === 0) {
      throw new Error(`These resources reference each other in a cycle: ${[...pending.keys()].join(', ')}.`);
    }
    const created = await Promise.all(
      ready.map(async (logicalId) => {
        const resource = resources[logicalId];
        try {
          const properties = (ctx.resolve(resource.Properties ?? {}) ?? {}) as Record<string, unknown>;
          return [logicalId, await PROVISIONERS[resource.Type].create(logicalId, properties, ctx)] as const;
        } catch (err) {
          throw new Error(`Cannot provision ${logicalId} (${resource.Type}): ${(err as Error).message}`, { cause: err });
        }
      }),
    );
    for (const [logicalId, output] of created) {
      outputs.set(logicalId, output);
      pending.delete(logicalId);
    }
  }
  return provisioned;
}

/** Logical ids a value refers to through Ref, Fn::GetAtt or Fn::Sub. */
function references(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) references(item, found);
  } else if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1) {
      const [[key, arg]] = entries;
      if (key === 'Ref' && typeof arg === 'string' && !arg.startsWith('AWS::')) found.add(arg);
      if (key === 'Fn::GetAtt') {
        const target = typeof arg === 'string' ? arg.split('.')[0] : Array.isArray(arg) ? arg[0] : undefined;
        if (typeof target === 'string') found.add(target);
      }
      if (key === 'Fn::Sub') {
        const [template, variables] = typeof arg === 'string' ? [arg, {}] : Array.isArray(arg) ? arg : [undefined, {}];
        if (typeof template === 'string') {
          for (const match of template.matchAll(/\$\{([^}!][^}]*)\}/g)) {
            const name = match[1].trim().split('.')[0];
            if (!name.startsWith('AWS::') && !Object.hasOwn((variables ?? {}) as object, match[1].trim())) found.add(name);
          }
        }
        references(variables, found);
        return found;
      }
    }
    for (const [, item] of entries) references(item, found);
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// DynamoDB

async function provisionTable(logicalId: string, props: Record<string, unknown>, ctx: Context): Promise<Outputs> {
  const tableName = stringOr(props.TableName, logicalId);
  const input = createTableInput(tableName, props);
  const dynamo = dynamoClient();
  try {
    await dynamo.send(new CreateTableCommand(input));
  } catch (err) {
    if ((err as Error).name !== 'ResourceInUseException') throw err;
  }
  const table = await waitUntilActive(tableName);
  assertSameShape(table, input);

  const ttl = props.TimeToLiveSpecification as { AttributeName?: string; Enabled?: unknown } | undefined;
  if (ttl?.AttributeName && truthy(ttl.Enabled)) await enableTimeToLive(tableName, ttl.AttributeName);

  const arn = `arn:aws:dynamodb:${ctx.region}:${ctx.accountId}:table/${tableName}`;
  return {
    ref: tableName,
    attributes: { Arn: arn, StreamArn: `${arn}/stream/1970-01-01T00:00:00.000` },
  };
}

function createTableInput(tableName: string, props: Record<string, unknown>): CreateTableCommandInput {
  const billingMode = props.BillingMode === undefined ? undefined : String(props.BillingMode);
  const provisioned = billingMode !== 'PAY_PER_REQUEST';
  return {
    TableName: tableName,
    AttributeDefinitions: props.AttributeDefinitions as AttributeDefinition[],
    KeySchema: props.KeySchema as KeySchemaElement[],
    ...(billingMode ? { BillingMode: billingMode as CreateTableCommandInput['BillingMode'] } : {}),
    ...(provisioned && props.ProvisionedThroughput ? { ProvisionedThroughput: throughput(props.ProvisionedThroughput) } : {}),
    ...(Array.isArray(props.GlobalSecondaryIndexes)
      ? {
          GlobalSecondaryIndexes: props.GlobalSecondaryIndexes.map(
            (index: Record<string, unknown>): GlobalSecondaryIndex => ({
              IndexName: String(index.IndexName),
              KeySchema: index.KeySchema as KeySchemaElement[],
              Projection: index.Projection as Projection,
              ...(provisioned && index.ProvisionedThroughput ? { ProvisionedThroughput: throughput(index.ProvisionedThroughput) } : {}),
            }),
          ),
        }
      : {}),
    ...(Array.isArray(props.LocalSecondaryIndexes)
      ? {
          LocalSecondaryIndexes: props.LocalSecondaryIndexes.map(
            (index: Record<string, unknown>): LocalSecondaryIndex => ({
              IndexName: String(index.IndexName),
              KeySchema: index.KeySchema as KeySchemaElement[],
              Projection: index.Projection as Projection,
            }),
          ),
        }
      : {}),
  };
}

function throughput(value: unknown): ProvisionedThroughput {
  const { ReadCapacityUnits, WriteCapacityUnits } = value as Record<string, unknown>;
  return { ReadCapacityUnits: Number(ReadCapacityUnits), WriteCapacityUnits: Number(WriteCapacityUnits) };
}

async function waitUntilActive(tableName: string): Promise<TableDescription> {
  const deadline = Date.now() + TABLE_ACTIVE_TIMEOUT_MS;
  for (;;) {
    const { Table } = await dynamoClient().send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE');
    if (Table && Table.TableStatus === 'ACTIVE' && indexesActive) return Table;
    if (Date.now() > deadline) {
      throw new Error(
        `table ${tableName} is still ${Table?.TableStatus ?? 'missing'} after ${TABLE_ACTIVE_TIMEOUT_MS / 1000} s ` +
          '(an emulator stopped while creating it?); delete the data directory to start afresh.',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An existing table must have the keys and indexes serverless.yml declares. */
function assertSameShape(table: TableDescription, wanted: CreateTableCommandInput): void {
  const keys = (schema: KeySchemaElement[] | undefined) => (schema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`).join(',');
  const problems: string[] = [];
  if (keys(table.KeySchema) !== keys(wanted.KeySchema)) {
    problems.push(`key schema is ${keys(table.KeySchema)}, serverless.yml says ${keys(wanted.KeySchema)}`);
  }
  const compare = (
    kind: string,
    existing: { IndexName?: string; KeySchema?: KeySchemaElement[] }[] = [],
    declared: { IndexName?: string; KeySchema?: KeySchemaElement[] }[] = [],
  ) => {
    for (const index of declared) {
      const match = existing.find((e) => e.IndexName === index.IndexName);
      if (!match) problems.push(`${kind} ${index.IndexName} is missing`);
      else if (keys(match.KeySchema) !== keys(index.KeySchema))
        problems.push(`${kind} ${index.IndexName} has keys ${keys(match.KeySchema)}, serverless.yml says ${keys(index.KeySchema)}`);
    }
  };
  compare('global secondary index', table.GlobalSecondaryIndexes, wanted.GlobalSecondaryIndexes);
  compare('local secondary index', table.LocalSecondaryIndexes, wanted.LocalSecondaryIndexes);
  if (problems.length > 0) {
    throw new Error(
      `table ${wanted.TableName} exists with another shape (${problems.join('; ')}). Keys and indexes cannot be ` +
        'changed in place locally: delete the local data directory (or the table) to recreate it.',
    );
  }
}

async function enableTimeToLive(tableName: string, attributeName: string): Promise<void> {
  const dynamo = dynamoClient();
  try {
    const { TimeToLiveDescription: current } = await dynamo.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    const status = current?.TimeToLiveStatus;
    if ((status === 'ENABLED' || status === 'ENABLING') && current?.AttributeName === attributeName) return;
    await dynamo.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: attributeName, Enabled: true } }));
  } catch (err) {
    // dynalite has no TTL (UpdateTimeToLive is an unknown operation): expired items stay until
    // deleted, which DynamoDB allows too (its TTL deletes lazily), so readers check expiry anyway.
    if ((err as Error).name === 'UnknownOperationException') return;
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// SQS

/**
 * CloudFormation properties of AWS::SQS::Queue that are queue attributes of the same name.
 * SqsManagedSseEnabled is not among them: encryption at rest is the cloud's, and the local emulator
 * refuses to set it on an existing queue, so a queue whose other attributes changed could not be updated.
 */
const QUEUE_ATTRIBUTES = [
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'DelaySeconds',
  'FifoQueue',
  'FifoThroughputLimit',
  'KmsDataKeyReusePeriodSeconds',
  'KmsMasterKeyId',
  'MaximumMessageSize',
  'MessageRetentionPeriod',
  'ReceiveMessageWaitTimeSeconds',
  'RedriveAllowPolicy',
  'RedrivePolicy',
  'VisibilityTimeout',
] as const;

async function provisionQueue(logicalId: string, props: Record<string, unknown>, _ctx: Context): Promise<Outputs> {
  const fifo = truthy(props.FifoQueue);
  const queueName = stringOr(props.QueueName, fifo ? `${logicalId}.fifo` : logicalId);
  const attributes = queueAttributes(props);
  const sqs = sqsClient();

  let queueUrl: string | undefined;
  try {
    ({ QueueUrl: queueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: queueName, Attributes: attributes })));
  } catch (err) {
    // The queue exists with other attributes (serverless.yml changed while the emulator ran): update it.
    if (!/QueueNameExists|QueueAlreadyExists/.test((err as Error).name)) throw err;
    ({ QueueUrl: queueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName })));
    const current: Record<string, string | undefined> =
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }))).Attributes ?? {};
    const changed = Object.fromEntries(Object.entries(attributes).filter(([name, value]) => name !== 'FifoQueue' && current[name] !== value));
    if (Object.keys(changed).length > 0) {
      await sqs.send(new SetQueueAttributesCommand({ QueueUrl: queueUrl, Attributes: changed }));
    }
  }
  if (!queueUrl) throw new Error(`the emulator returned no URL for queue ${queueName}`);

  // The emulator's own ARN: the one it matches a dead-letter target against.
  const { Attributes: { QueueArn } = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  if (!QueueArn) throw new Error(`the emulator returned no ARN for queue ${queueName}`);
  return { ref: queueUrl, attributes: { Arn: QueueArn, QueueUrl: queueUrl, QueueName: queueName } };
}

function queueAttributes(props: Record<string, unknown>): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const name of QUEUE_ATTRIBUTES) {
    const value = props[name];
    if (value === undefined || value === null) continue;
    if (name === 'RedrivePolicy' && typeof value === 'object') {
      const { deadLetterTargetArn, maxReceiveCount, ...rest } = value as Record<string, unknown>;
      attributes[name] = JSON.stringify({ deadLetterTargetArn, maxReceiveCount: Number(maxReceiveCount), ...rest });
    } else if (typeof value === 'object') {
      attributes[name] = JSON.stringify(value);
    } else {
      attributes[name] = String(value);
    }
  }
  return attributes;
}

// ---------------------------------------------------------------------------------------------
// S3

async function provisionBucket(logicalId: string, props: Record<string, unknown>, ctx: Context): Promise<Outputs> {
  const bucketName = stringOr(props.BucketName, `${logicalId.toLowerCase()}-${ctx.accountId}`);
  const s3 = s3Client();
  let exists = true;
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucketName }));
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 404) throw err;
    exists = false;
  }
  if (!exists) {
    try {
      await s3.send(new CreateBucketCommand({ Bucket: bucketName }));
    } catch (err) {
      // Another process created it in between.
      if (!['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes((err as Error).name)) throw err;
    }
  }
  return {
    ref: bucketName,
    attributes: {
      Arn: `arn:aws:s3:::${bucketName}`,
      DomainName: `${bucketName}.s3.amazonaws.com`,
      RegionalDomainName: `${bucketName}.s3.${ctx.region}.amazonaws.com`,
    },
  };
}

// ---------------------------------------------------------------------------------------------

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

function truthy(value: unknown): boolean {
  return value === true || value === 'true';
}
