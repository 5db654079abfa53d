/**
 * The packaged stack (`serverless package --stage ci`, offline) against AWS's own resource
 * specification: every resource of the generated CloudFormation template is a known type with
 * known properties of the right types, its required properties present and its values among the
 * allowed ones. The checker is itself checked on templates that break each rule.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { checkTemplate, loadResourceSpecification, type ResourceSpecification } from './cfn-resource-spec';
import { PACKAGE_TIMEOUT_MS, packagedTemplate, type CfnTemplate } from './packaged-template';

let spec: ResourceSpecification;
let template: CfnTemplate;

beforeAll(async () => {
  spec = loadResourceSpecification();
  template = await packagedTemplate();
}, PACKAGE_TIMEOUT_MS);

const queue = (properties: Record<string, unknown>) => ({ Resources: { Work: { Type: 'AWS::SQS::Queue', Properties: properties } } });

describe('the packaged template against AWS resource specification', () => {
  it('has only known resources, with known properties of the right types and allowed values', () => {
    expect(Object.keys(template.Resources).length).toBeGreaterThan(50);
    expect(checkTemplate(template as never, spec)).toEqual([]);
  });
});

describe('the check itself', () => {
  it('finds an unknown resource type and an unknown property', () => {
    expect(checkTemplate({ Resources: { Thing: { Type: 'AWS::SQS::Qeueu' } } }, spec)).toEqual(['Thing: unknown resource type AWS::SQS::Qeueu']);
    expect(checkTemplate(queue({ MessageRetention: 60 }), spec)).toEqual(['Work (AWS::SQS::Queue): unknown property MessageRetention']);
  });

  it('finds a missing required property, also in a nested type', () => {
    const table = { Resources: { T: { Type: 'AWS::DynamoDB::Table', Properties: { AttributeDefinitions: [{ AttributeName: 'pk' }] } } } };
    const problems = checkTemplate(table, spec);
    expect(problems).toContain('T (AWS::DynamoDB::Table): required property KeySchema is missing');
    expect(problems).toContain('T (AWS::DynamoDB::Table).AttributeDefinitions[0]: required property AttributeType is missing');
  });

  it('finds values of the wrong type and outside the allowed ones, and lets intrinsic functions through', () => {
    expect(checkTemplate(queue({ VisibilityTimeout: 'soon', FifoQueue: 'yes' }), spec)).toEqual([
      'Work (AWS::SQS::Queue).VisibilityTimeout: expected a integer, got "soon"',
      'Work (AWS::SQS::Queue).FifoQueue: expected a boolean, got "yes"',
    ]);
    const platform = { Resources: { App: { Type: 'AWS::Amplify::App', Properties: { Name: 'a', Platform: 'MOBILE' } } } };
    expect(checkTemplate(platform, spec)).toEqual(['App (AWS::Amplify::App).Platform: expected one of WEB, WEB_DYNAMIC, WEB_COMPUTE, got "MOBILE"']);
    expect(checkTemplate(queue({ VisibilityTimeout: { Ref: 'Timeout' }, QueueName: { 'Fn::Sub': '${AWS::StackName}-work' } }), spec)).toEqual([]);
  });
});
