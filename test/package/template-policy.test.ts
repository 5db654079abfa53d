/**
 * The packaged stack (`serverless package --stage ci`, offline) against the checks a static scanner
 * of CloudFormation makes for a stack like this one: no statement on every resource, encryption at
 * rest, dead-letter queues with alarms, log retention, a private bucket reached only over TLS, and
 * limits on how much of the account's concurrency the stage can take. Each failure names the
 * resource; the exemptions are in docs/decisions.md (Template policies).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_TIMEOUT_MS, getAttTargets, packagedTemplate, refOf, resourcesOfType, type CfnResource, type CfnTemplate } from './packaged-template';

let template: CfnTemplate;

beforeAll(async () => {
  template = await packagedTemplate();
}, PACKAGE_TIMEOUT_MS);

interface Statement {
  Sid?: string;
  Effect?: string;
  Resource?: unknown;
  NotResource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

function asList<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Every policy document of a resource, named by where it sits (a role's trust policy names no resource, so it is left out). */
function policyDocuments(resource: CfnResource): Array<[string, { Statement?: unknown } | undefined]> {
  const props = resource.Properties ?? {};
  switch (resource.Type) {
    case 'AWS::IAM::Role':
    case 'AWS::IAM::User':
    case 'AWS::IAM::Group':
      return asList(props.Policies as Array<{ PolicyName?: unknown; PolicyDocument?: { Statement?: unknown } }>).map((policy, index) => [
        `Policies[${index}]`,
        policy.PolicyDocument,
      ]);
    case 'AWS::IAM::Policy':
    case 'AWS::IAM::ManagedPolicy':
    case 'AWS::S3::BucketPolicy':
    case 'AWS::SQS::QueuePolicy':
    case 'AWS::SNS::TopicPolicy':
      return [['PolicyDocument', props.PolicyDocument]];
    case 'AWS::KMS::Key':
      return [['KeyPolicy', props.KeyPolicy]];
    default:
      return [];
  }
}

/** `<resource>.<document>.Statement[i] (Sid)` for each statement that names every resource. */
function wildcardStatements(resources: Record<string, CfnResource>): string[] {
  const found: string[] = [];
  for (const [id, resource] of Object.entries(resources)) {
    // In a key policy the statement's resource is the key itself, and AWS documents "*" as the way
    // to write that (a key policy cannot name its own key's ARN before the key exists). It grants
    // nothing beyond this key, so it is the one form of "*" allowed.
    if (resource.Type === 'AWS::KMS::Key') continue;
    for (const [where, document] of policyDocuments(resource)) {
      asList(document?.Statement as Statement | Statement[]).forEach((statement, index) => {
        const resourcesNamed = asList(statement.Resource as unknown);
        if (resourcesNamed.includes('*') || statement.NotResource !== undefined) {
          found.push(`${id}.${where}.Statement[${index}]${statement.Sid ? ` (${statement.Sid})` : ''}`);
        }
      });
    }
  }
  return found;
}

/** Logical ids of the queues some RedrivePolicy names as its dead-letter target. */
function deadLetterQueues(): Set<string> {
  const targets = new Set<string>();
  for (const [, queue] of resourcesOfType(template, 'AWS::SQS::Queue')) {
    for (const target of getAttTargets(queue.Properties?.RedrivePolicy?.deadLetterTargetArn)) targets.add(target);
  }
  return targets;
}

/** A number in the template, or a Ref to a Number parameter with a numeric default: its value by default. */
function numberByDefault(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  const parameterName = refOf(value);
  const parameters = (template.Parameters ?? {}) as Record<string, { Type?: string; Default?: unknown }>;
  const parameter = parameterName ? parameters[parameterName] : undefined;
  if (parameter?.Type !== 'Number') return undefined;
  const fallback = Number(parameter.Default);
  return parameter.Default !== undefined && parameter.Default !== '' && Number.isFinite(fallback) ? fallback : undefined;
}

/** The resources (bucket and its objects) a TLS-only bucket policy must cover, as they are written here. */
function bucketTargets(bucketId: string): { bucket: string; objects: string } {
  return {
    bucket: JSON.stringify({ 'Fn::GetAtt': [bucketId, 'Arn'] }),
    objects: JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/*']] }),
  };
}

/** True when the statement denies every S3 action to everyone on `resources` unless the request is over TLS. */
function deniesPlainTransport(statement: Statement, bucketId: string): boolean {
  if (statement.Effect !== 'Deny') return false;
  const principal = statement.Principal as unknown;
  if (principal !== '*' && JSON.stringify(principal) !== JSON.stringify({ AWS: '*' })) return false;
  if (!asList(statement.Action as string | string[]).includes('s3:*')) return false;
  const secure = statement.Condition?.Bool?.['aws:SecureTransport'];
  if (secure !== false && secure !== 'false') return false;
  const named = asList(statement.Resource as unknown).map((resource) => JSON.stringify(resource));
  const frameworkStyle = (suffix: string) =>
    JSON.stringify({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: bucketId }, ...(suffix ? [suffix] : [])]] });
  const { bucket, objects } = bucketTargets(bucketId);
  const coversBucket = named.includes(bucket) || named.includes(frameworkStyle(''));
  const coversObjects = named.includes(objects) || named.includes(frameworkStyle('/*'));
  return coversBucket && coversObjects;
}

describe('template policies of the packaged stack', () => {
  it('has no policy statement on Resource "*", in our roles or the framework’s (a KMS key policy’s own "*" excepted)', () => {
    const roles = resourcesOfType(template, 'AWS::IAM::Role').map(([id]) => id);
    // The framework's shared role and the per-function ones are among the roles checked.
    expect(roles).toContain('IamRoleLambdaExecution');
    for (const [id, fn] of resourcesOfType(template, 'AWS::Lambda::Function')) {
      expect(roles, `the role of ${id}`).toEqual(expect.arrayContaining(getAttTargets(fn.Properties?.Role)));
    }
    expect(wildcardStatements(template.Resources), 'statements on Resource "*" (or NotResource)').toEqual([]);
  });

  it('encrypts every table, queue and bucket at rest', () => {
    const unencrypted = [
      ...resourcesOfType(template, 'AWS::DynamoDB::Table')
        .filter(([, table]) => table.Properties?.SSESpecification?.SSEEnabled !== true)
        .map(([id]) => `${id}: no SSESpecification { SSEEnabled: true }`),
      ...resourcesOfType(template, 'AWS::SQS::Queue')
        .filter(([, queue]) => queue.Properties?.SqsManagedSseEnabled !== true && queue.Properties?.KmsMasterKeyId === undefined)
        .map(([id]) => `${id}: neither SqsManagedSseEnabled nor KmsMasterKeyId`),
      ...resourcesOfType(template, 'AWS::S3::Bucket')
        .filter(([, bucket]) => {
          const rules = asList(bucket.Properties?.BucketEncryption?.ServerSideEncryptionConfiguration as Array<Record<string, any>>);
          return !rules.some((rule) => ['AES256', 'aws:kms', 'aws:kms:dsse'].includes(rule.ServerSideEncryptionByDefault?.SSEAlgorithm));
        })
        .map(([id]) => `${id}: no default encryption`),
    ];
    expect(resourcesOfType(template, 'AWS::DynamoDB::Table').length).toBeGreaterThan(0);
    expect(unencrypted).toEqual([]);
  });

  it('gives every work queue a dead-letter queue, and every dead-letter queue an alarm on its depth', () => {
    const dlqs = deadLetterQueues();
    expect(dlqs.size).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const [id, queue] of resourcesOfType(template, 'AWS::SQS::Queue')) {
      if (dlqs.has(id)) continue;
      const redrive = queue.Properties?.RedrivePolicy;
      if (!redrive) problems.push(`${id}: a work queue without a RedrivePolicy`);
      else if (!(Number(redrive.maxReceiveCount) >= 1)) problems.push(`${id}: RedrivePolicy without a maxReceiveCount`);
    }
    const alarms = resourcesOfType(template, 'AWS::CloudWatch::Alarm');
    for (const dlq of dlqs) {
      const watching = alarms.filter(([, alarm]) => {
        const props = alarm.Properties ?? {};
        const dimension = asList(props.Dimensions as Array<{ Name?: string; Value?: unknown }>).find((d) => d.Name === 'QueueName');
        return (
          props.Namespace === 'AWS/SQS' &&
          props.MetricName === 'ApproximateNumberOfMessagesVisible' &&
          getAttTargets(dimension?.Value).includes(dlq) &&
          props.ComparisonOperator === 'GreaterThanThreshold' &&
          Number(props.Threshold) === 0
        );
      });
      if (watching.length === 0) problems.push(`${dlq}: a dead-letter queue without an alarm on ApproximateNumberOfMessagesVisible > 0`);
    }
    expect(problems).toEqual([]);
  });

  it('gives every function a log group with a retention', () => {
    const groups = resourcesOfType(template, 'AWS::Logs::LogGroup');
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(0);
    const problems = functions.flatMap(([id, fn]) => {
      const wanted = `/aws/lambda/${fn.Properties?.FunctionName}`;
      const group = groups.find(([, candidate]) => candidate.Properties?.LogGroupName === wanted);
      if (!group) return [`${id}: no log group ${wanted}`];
      const days = group[1].Properties?.RetentionInDays;
      return Number.isInteger(days) && days > 0 ? [] : [`${id}: its log group ${group[0]} keeps logs forever (no RetentionInDays)`];
    });
    expect(problems).toEqual([]);
  });

  it('blocks public access to every bucket and refuses requests to it or its objects without TLS', () => {
    const policies = resourcesOfType(template, 'AWS::S3::BucketPolicy');
    const problems = resourcesOfType(template, 'AWS::S3::Bucket').flatMap(([id, bucket]) => {
      const found: string[] = [];
      const block = bucket.Properties?.PublicAccessBlockConfiguration ?? {};
      for (const setting of ['BlockPublicAcls', 'BlockPublicPolicy', 'IgnorePublicAcls', 'RestrictPublicBuckets']) {
        if (block[setting] !== true) found.push(`${id}: PublicAccessBlockConfiguration.${setting} is not true`);
      }
      const statements = policies
        .filter(([, policy]) => refOf(policy.Properties?.Bucket) === id)
        .flatMap(([, policy]) => asList(policy.Properties?.PolicyDocument?.Statement as Statement | Statement[]));
      if (!statements.some((statement) => deniesPlainTransport(statement, id))) {
        found.push(`${id}: no bucket policy denying s3:* on the bucket and its objects when aws:SecureTransport is false`);
      }
      return found;
    });
    expect(resourcesOfType(template, 'AWS::S3::Bucket').map(([id]) => id)).toContain('DataBucket');
    expect(problems).toEqual([]);
  });

  it('throttles the API stage and caps every queue worker, with defaults every stage gets', () => {
    const problems: string[] = [];
    const deployments = resourcesOfType(template, 'AWS::ApiGateway::Deployment');
    expect(deployments.length).toBeGreaterThan(0);
    for (const [id, deployment] of deployments) {
      const stage = deployment.Properties?.StageDescription ?? {};
      const rate = numberByDefault(stage.ThrottlingRateLimit);
      const burst = numberByDefault(stage.ThrottlingBurstLimit);
      if (!deployment.Properties?.StageName) problems.push(`${id}: creates no stage, so its StageDescription applies to none`);
      if (!(rate && rate > 0)) problems.push(`${id}: StageDescription.ThrottlingRateLimit is not a number or a Number parameter with a default`);
      if (!(burst && burst > 0)) problems.push(`${id}: StageDescription.ThrottlingBurstLimit is not a number or a Number parameter with a default`);
      // API Gateway's account-wide limits in a region: a stage limit above them limits nothing.
      if (rate && rate > 10_000) problems.push(`${id}: a rate limit of ${rate} is above the account's 10,000 requests per second`);
      if (burst && burst > 5_000) problems.push(`${id}: a burst limit of ${burst} is above the account's 5,000`);
    }
    // A queue's event source without a cap scales its function to as many pollers as the queue
    // has work for; the cap (unlike reserved concurrency) takes nothing from the account's pool.
    for (const [id, mapping] of resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')) {
      const fromQueue = getAttTargets(mapping.Properties?.EventSourceArn).some((target) => template.Resources[target]?.Type === 'AWS::SQS::Queue');
      if (fromQueue && !(Number(mapping.Properties?.ScalingConfig?.MaximumConcurrency) >= 2)) {
        problems.push(`${id}: an SQS event source without ScalingConfig.MaximumConcurrency`);
      }
    }
    // An account starts with 1,000 concurrent executions, and Lambda keeps 100 of them unreserved.
    const reserved = resourcesOfType(template, 'AWS::Lambda::Function').reduce(
      (sum, [, fn]) => sum + (numberByDefault(fn.Properties?.ReservedConcurrentExecutions) ?? 0),
      0,
    );
    if (reserved > 900) problems.push(`functions reserve ${reserved} concurrent executions, more than a new account can leave unreserved`);
    expect(problems).toEqual([]);
  });
});

describe('the checks themselves', () => {
  const role = (statement: Statement): Record<string, CfnResource> => ({
    Role: { Type: 'AWS::IAM::Role', Properties: { Policies: [{ PolicyName: 'p', PolicyDocument: { Statement: [statement] } }] } },
  });

  it('find a statement on "*" in a role or a resource policy, and let a key policy’s "*" through', () => {
    expect(wildcardStatements(role({ Effect: 'Allow', Action: 'logs:PutLogEvents', Resource: '*' }))).toEqual(['Role.Policies[0].Statement[0]']);
    expect(wildcardStatements(role({ Sid: 'Rest', Effect: 'Allow', Action: 's3:GetObject', NotResource: 'arn:aws:s3:::b/*' }))).toEqual([
      'Role.Policies[0].Statement[0] (Rest)',
    ]);
    const queuePolicy = { Type: 'AWS::SQS::QueuePolicy', Properties: { PolicyDocument: { Statement: { Effect: 'Allow', Action: 'sqs:*', Resource: ['*'] } } } };
    expect(wildcardStatements({ Policy: queuePolicy })).toEqual(['Policy.PolicyDocument.Statement[0]']);
    const key = { Type: 'AWS::KMS::Key', Properties: { KeyPolicy: { Statement: [{ Effect: 'Allow', Action: 'kms:*', Resource: '*' }] } } };
    expect(wildcardStatements({ Key: key })).toEqual([]);
    expect(wildcardStatements(role({ Effect: 'Allow', Action: 'kms:Decrypt', Resource: { 'Fn::GetAtt': ['Key', 'Arn'] } }))).toEqual([]);
  });

  it('accept a TLS-only bucket policy only when it covers the bucket and its objects', () => {
    const statement = (resource: unknown[]): Statement => ({
      Effect: 'Deny',
      Principal: '*',
      Action: 's3:*',
      Resource: resource,
      Condition: { Bool: { 'aws:SecureTransport': false } },
    });
    const { bucket, objects } = bucketTargets('B');
    expect(deniesPlainTransport(statement([JSON.parse(bucket), JSON.parse(objects)]), 'B')).toBe(true);
    expect(deniesPlainTransport(statement([JSON.parse(bucket)]), 'B')).toBe(false);
    expect(deniesPlainTransport({ ...statement([JSON.parse(bucket), JSON.parse(objects)]), Effect: 'Allow' }, 'B')).toBe(false);
    expect(deniesPlainTransport({ ...statement([JSON.parse(bucket), JSON.parse(objects)]), Condition: {} }, 'B')).toBe(false);
  });
});
