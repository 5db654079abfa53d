import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { maxRequestTimeoutMs } from '../../lib/core/time';
import { loadServerlessConfig, parseServerlessYaml, resolveIntrinsics } from '../../lib/local/template/serverless-config';

const dir = mkdtempSync(path.join(os.tmpdir(), 'serverless-config-test-'));
let fileCounter = 0;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(text: string): string {
  fileCounter += 1;
  const file = path.join(dir, `serverless-${fileCounter}.yml`);
  writeFileSync(file, text);
  return file;
}

/** A minimal service whose provider.environment is `environment` (YAML lines, indented 4). */
function withEnvironment(environment: string, extra = ''): string {
  return `service: svc
provider:
  name: aws
  stage: \${opt:stage, 'dev'}
  region: \${opt:region, 'eu-west-1'}
  environment:
${environment}
${extra}`;
}

describe('CloudFormation short-form tags', () => {
  it('become long-form intrinsic objects, nested and aliased', () => {
    const parsed = parseServerlessYaml(`
a: !Ref MyTable
b: !GetAtt MyTable.Arn
c: !GetAtt [MyTable, StreamArn]
d: !GetAtt Db.Endpoint.Address
e: !Sub 'arn:\${AWS::Partition}:s3:::\${Bucket}/*'
f: !Sub ['\${Name}-x', { Name: !Ref Thing }]
g: !Join ['', [!GetAtt MyTable.Arn, '/index/*']]
h: !Select [0, !GetAZs '']
i: !Split [',', 'a,b']
j: !If [IsProd, !Ref Big, !Ref AWS::NoValue]
k: !Equals [!Ref Stage, prod]
l: !Not [!Condition IsProd]
m: !FindInMap [Sizes, !Ref Stage, memory]
n: !ImportValue shared-vpc
o: !Base64 'hello'
p: !ImportValue { 'Fn::Sub': '\${AWS::StackName}-id' }
q: !And [!Condition A, !Or [!Condition B, !Condition C]]
shared: &statements
  - Resource: !GetAtt Key.Arn
copy: *statements
`);
    expect(parsed).toEqual({
      a: { Ref: 'MyTable' },
      b: { 'Fn::GetAtt': ['MyTable', 'Arn'] },
      c: { 'Fn::GetAtt': ['MyTable', 'StreamArn'] },
      d: { 'Fn::GetAtt': ['Db', 'Endpoint.Address'] },
      e: { 'Fn::Sub': 'arn:${AWS::Partition}:s3:::${Bucket}/*' },
      f: { 'Fn::Sub': ['${Name}-x', { Name: { Ref: 'Thing' } }] },
      g: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['MyTable', 'Arn'] }, '/index/*']] },
      h: { 'Fn::Select': [0, { 'Fn::GetAZs': '' }] },
      i: { 'Fn::Split': [',', 'a,b'] },
      j: { 'Fn::If': ['IsProd', { Ref: 'Big' }, { Ref: 'AWS::NoValue' }] },
      k: { 'Fn::Equals': [{ Ref: 'Stage' }, 'prod'] },
      l: { 'Fn::Not': [{ Condition: 'IsProd' }] },
      m: { 'Fn::FindInMap': ['Sizes', { Ref: 'Stage' }, 'memory'] },
      n: { 'Fn::ImportValue': 'shared-vpc' },
      o: { 'Fn::Base64': 'hello' },
      p: { 'Fn::ImportValue': { 'Fn::Sub': '${AWS::StackName}-id' } },
      q: { 'Fn::And': [{ Condition: 'A' }, { 'Fn::Or': [{ Condition: 'B' }, { Condition: 'C' }] }] },
      shared: [{ Resource: { 'Fn::GetAtt': ['Key', 'Arn'] } }],
      copy: [{ Resource: { 'Fn::GetAtt': ['Key', 'Arn'] } }],
    });
  });

  it('reports a malformed !GetAtt and unknown tags', () => {
    expect(() => parseServerlessYaml('a: !GetAtt NoAttribute\n')).toThrow(/GetAtt/);
    expect(() => parseServerlessYaml('a: !NotCloudFormation x\n')).toThrow(/NotCloudFormation/);
    expect(() => parseServerlessYaml('a: [unclosed\n')).toThrow();
  });
});

describe('variables', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  });

  it('resolves the documented sources, fallbacks and nesting', () => {
    process.env.GW_TEST_SET = 'from-env';
    delete process.env.GW_TEST_UNSET;
    const file = writeConfig(
      withEnvironment(
        `    STAGE: \${sls:stage}
    OPT_STAGE: \${opt:stage, 'dev'}
    REGION: \${aws:region}
    ACCOUNT: \${aws:accountId}
    ENV_SET: \${env:GW_TEST_SET}
    ENV_DEFAULT: \${env:GW_TEST_UNSET, 'fallback'}
    NESTED_DEFAULT: \${env:GW_TEST_UNSET, \${self:custom.name}}
    NESTED_ADDRESS: \${self:custom.sizes.\${sls:stage}}
    SELF_CHAIN: \${self:provider.stage}
    NUMBER: \${self:custom.number}
    NUMBER_FALLBACK: \${env:GW_TEST_UNSET, 42}
    EMBEDDED: prefix-\${self:service}-\${sls:stage}-\${self:custom.number}
    OBJECT: \${self:custom.sizes}
    DOUBLE_QUOTED: \${env:GW_TEST_UNSET, "dq"}
    TABLE: !Ref Table
    SUB: !Sub '\${self:service}-\${AWS::Region}-\${Table.Arn}'
    ESCAPED: '\\\${literal}'`,
        `custom:
  name: custom-name
  number: 7
  sizes:
    ci: 512
    prod: 2048
`,
      ),
    );
    const config = loadServerlessConfig({ file, stage: 'ci' });
    expect(config.service).toBe('svc');
    expect(config.stage).toBe('ci');
    expect(config.region).toBe('eu-west-1');
    expect(config.environment).toEqual({
      STAGE: 'ci',
      OPT_STAGE: 'ci',
      REGION: 'eu-west-1',
      ACCOUNT: '000000000000',
      ENV_SET: 'from-env',
      ENV_DEFAULT: 'fallback',
      NESTED_DEFAULT: 'custom-name',
      NESTED_ADDRESS: 512,
      SELF_CHAIN: 'ci',
      NUMBER: 7,
      NUMBER_FALLBACK: 42,
      EMBEDDED: 'prefix-svc-ci-7',
      OBJECT: { ci: 512, prod: 2048 },
      DOUBLE_QUOTED: 'dq',
      TABLE: { Ref: 'Table' },
      SUB: { 'Fn::Sub': 'svc-${AWS::Region}-${Table.Arn}' },
      ESCAPED: '${literal}',
    });
  });

  it('takes the region from the options, then provider.region', () => {
    const file = writeConfig(withEnvironment("    REGION: ${aws:region}\n    OPT: ${opt:region, 'none'}"));
    const given = loadServerlessConfig({ file, stage: 'ci', region: 'ap-southeast-2' });
    expect(given.region).toBe('ap-southeast-2');
    expect(given.environment).toEqual({ REGION: 'ap-southeast-2', OPT: 'ap-southeast-2' });
    const defaulted = loadServerlessConfig({ file, stage: 'ci' });
    expect(defaulted.region).toBe('eu-west-1');
    expect(defaulted.environment).toEqual({ REGION: 'eu-west-1', OPT: 'none' });
  });

  it('names a variable it cannot resolve', () => {
    delete process.env.GW_TEST_UNSET;
    const cases: Array<[string, RegExp]> = [
      ['${ssm:/gateway/secret}', /\$\{ssm:\/gateway\/secret\}.*provider\.environment\.X/],
      ['${env:GW_TEST_UNSET}', /\$\{env:GW_TEST_UNSET\}.*provider\.environment\.X/],
      ['${self:custom.missing}', /\$\{self:custom\.missing\}/],
      ['${opt:profile}', /\$\{opt:profile\}/],
      ['${file(./other.yml):x}', /unsupported variable \$\{file\(\.\/other\.yml\):x\}/],
      ['prefix-${sls:instanceId}', /\$\{sls:instanceId\}/],
    ];
    for (const [value, message] of cases) {
      const file = writeConfig(withEnvironment(`    X: '${value}'`));
      expect(() => loadServerlessConfig({ file, stage: 'ci' }), value).toThrow(message);
    }
  });

  it('detects a circular reference', () => {
    const file = writeConfig(withEnvironment('    X: ${self:custom.a}', 'custom:\n  a: ${self:custom.b}\n  b: ${self:custom.a}\n'));
    expect(() => loadServerlessConfig({ file, stage: 'ci' })).toThrow(/circular/);
  });
});

describe('functions and routes', () => {
  it('normalises methods and paths and applies defaults', () => {
    const file = writeConfig(`service: svc
provider:
  name: aws
  timeout: 10
  memorySize: 256
  apiGateway:
    timeoutInMillis: 20000
functions:
  streamer:
    handler: index.handler
    package:
      artifact: ./.build/artifacts/streamer.zip
    timeout: 900
    events:
      - http:
          path: v1/{proxy+}
          method: any
          timeoutInMillis: 900000
          response:
            transferMode: stream
  plain:
    handler: index.handler
    memorySize: 2048
    events:
      - http: GET /v1/things/{id}
      - http:
          path: /v1/things/
          method: post
      - schedule: rate(1 hour)
`);
    const config = loadServerlessConfig({ file, stage: 'dev' });
    expect(config.environment).toEqual({});
    expect(config.resources).toEqual({});
    expect(config.functions).toEqual([
      {
        name: 'streamer',
        artifact: '.build/artifacts/streamer.zip',
        timeoutSeconds: 900,
        memorySize: 256,
        streaming: true,
        routes: [{ method: 'ANY', path: '/v1/{proxy+}', functionName: 'streamer', streaming: true, integrationTimeoutMs: 900000 }],
        queues: [],
      },
      {
        name: 'plain',
        artifact: '.build/artifacts/plain.zip',
        timeoutSeconds: 10,
        memorySize: 2048,
        streaming: false,
        routes: [
          { method: 'GET', path: '/v1/things/{id}', functionName: 'plain', streaming: false, integrationTimeoutMs: 20000 },
          { method: 'POST', path: '/v1/things', functionName: 'plain', streaming: false, integrationTimeoutMs: 20000 },
        ],
        queues: [],
      },
    ]);
    expect(config.routes.map((route) => `${route.method} ${route.path}`)).toEqual(['ANY /v1/{proxy+}', 'GET /v1/things/{id}', 'POST /v1/things']);
  });

  it('rejects an unknown HTTP method', () => {
    const file = writeConfig(`service: svc
provider: { name: aws }
functions:
  f:
    handler: index.handler
    events:
      - http: { path: /x, method: fetch }
`);
    expect(() => loadServerlessConfig({ file, stage: 'dev' })).toThrow(/fetch/);
  });

  it('reads the project serverless.yml', () => {
    const config = loadServerlessConfig({ file: fileURLToPath(new URL('../../serverless.yml', import.meta.url)), stage: 'ci' });
    expect(config.service).toBe('llm-gateway');
    expect(config.routes).toContainEqual({
      method: 'ANY',
      path: '/v1/{proxy+}',
      functionName: 'passthrough',
      streaming: true,
      integrationTimeoutMs: 900000,
    });
    expect(config.resources.ControlTable).toMatchObject({
      Type: 'AWS::DynamoDB::Table',
      Properties: { TableName: 'llm-gateway-ci-control' },
    });
    expect(config.environment.GATEWAY_CONTROL_TABLE).toEqual({ Ref: 'ControlTable' });
  });

  it('gives every streaming (inference) function the timeout that request timeouts are capped at', () => {
    const config = loadServerlessConfig({ file: fileURLToPath(new URL('../../serverless.yml', import.meta.url)), stage: 'ci' });
    const streaming = new Set(config.routes.filter((route) => route.streaming).map((route) => route.functionName));
    expect(streaming.size).toBeGreaterThan(0);
    for (const fn of config.functions.filter((candidate) => streaming.has(candidate.name))) expect(fn.timeoutSeconds * 1000).toBe(maxRequestTimeoutMs);
  });
});

describe('resolveIntrinsics', () => {
  const resolver = {
    ref: (id: string) => `ref(${id})`,
    getAtt: (id: string, attribute: string) => `${id}.${attribute}`,
    pseudo: { 'AWS::Region': 'us-east-1', 'AWS::StackName': 'stack' },
  };

  it('resolves Ref, GetAtt, Sub, Join, Select and Split into strings', () => {
    expect(
      resolveIntrinsics(
        {
          table: { Ref: 'Table' },
          region: { Ref: 'AWS::Region' },
          arn: { 'Fn::GetAtt': ['Table', 'Arn'] },
          arnDotted: { 'Fn::GetAtt': 'Table.Arn' },
          sub: { 'Fn::Sub': 'arn:${AWS::Partition}:${AWS::Region}:${AWS::AccountId}:${Table}/${Table.Arn}/${!Literal}' },
          subVars: { 'Fn::Sub': ['${Name}-${AWS::StackName}', { Name: { Ref: 'Thing' } }] },
          join: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Table', 'Arn'] }, '/index/*']] },
          select: { 'Fn::Select': [1, { 'Fn::Split': [',', { 'Fn::Sub': 'a,${AWS::Region},c' }] }] },
          split: { 'Fn::Split': ['-', 'x-y'] },
          list: [{ Ref: 'A' }, 'plain', 3],
          kept: { 'Fn::If': ['Cond', { Ref: 'A' }, 'b'] },
        },
        resolver,
      ),
    ).toEqual({
      table: 'ref(Table)',
      region: 'us-east-1',
      arn: 'Table.Arn',
      arnDotted: 'Table.Arn',
      sub: 'arn:aws:us-east-1:000000000000:ref(Table)/Table.Arn/${Literal}',
      subVars: 'ref(Thing)-stack',
      join: 'Table.Arn/index/*',
      select: 'us-east-1',
      split: ['x', 'y'],
      list: ['ref(A)', 'plain', 3],
      kept: { 'Fn::If': ['Cond', 'ref(A)', 'b'] },
    });
  });

  it('fails on a pseudo parameter it has no value for', () => {
    expect(() => resolveIntrinsics({ Ref: 'AWS::StackId' }, resolver)).toThrow(/AWS::StackId/);
    expect(() => resolveIntrinsics({ 'Fn::Select': [5, ['a']] }, resolver)).toThrow(/out of range/);
  });
});
