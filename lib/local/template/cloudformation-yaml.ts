/**
 * YAML for serverless.yml: CloudFormation short-form tags (`!Ref`, `!GetAtt`, `!Sub`, `!Join`, `!Select`,
 * `!Split`, `!If`, `!Equals`, `!Not`, `!And`, `!Or`, `!FindInMap`, `!ImportValue`, `!Base64`, `!GetAZs`,
 * `!Cidr`, `!Condition`) become their long-form objects (`{ Ref: 'X' }`, `{ 'Fn::GetAtt': ['X', 'Arn'] }`,
 * ...). Anchors, aliases and `<<` merge keys work as in the framework.
 */
import { Pair, Scalar, YAMLMap, parseDocument, type CollectionTag, type ScalarTag, type YAMLSeq } from 'yaml';
import { isPlainObject } from '../../core/plain-object';

/** Short-form tag → long-form key. `!Ref` and `!Condition` are scalar-only; `!GetAtt` is special. */
const FN_TAGS: Record<string, string> = {
  Sub: 'Fn::Sub',
  Join: 'Fn::Join',
  Select: 'Fn::Select',
  Split: 'Fn::Split',
  If: 'Fn::If',
  Equals: 'Fn::Equals',
  Not: 'Fn::Not',
  And: 'Fn::And',
  Or: 'Fn::Or',
  FindInMap: 'Fn::FindInMap',
  ImportValue: 'Fn::ImportValue',
  Base64: 'Fn::Base64',
  GetAZs: 'Fn::GetAZs',
  Cidr: 'Fn::Cidr',
  GetAtt: 'Fn::GetAtt',
};

/** Wraps a parsed collection node in a one-key map node, so aliases inside it still resolve. */
function wrapCollection(key: string) {
  return (collection: YAMLMap.Parsed | YAMLSeq.Parsed) => {
    const wrapper = new YAMLMap();
    wrapper.items.push(new Pair(new Scalar(key), collection));
    return wrapper;
  };
}

function splitGetAtt(value: string, onError: (message: string) => void): [string, string] | string {
  const dot = value.indexOf('.');
  if (dot <= 0 || dot === value.length - 1) {
    onError(`!GetAtt expects "LogicalId.Attribute", got "${value}"`);
    return value;
  }
  return [value.slice(0, dot), value.slice(dot + 1)];
}

export const cloudFormationTags: Array<ScalarTag | CollectionTag> = (() => {
  const tags: Array<ScalarTag | CollectionTag> = [
    { tag: '!Ref', resolve: (value: string) => ({ Ref: value }) },
    { tag: '!Condition', resolve: (value: string) => ({ Condition: value }) },
  ];
  for (const [short, long] of Object.entries(FN_TAGS)) {
    const tag = `!${short}`;
    if (short === 'GetAtt') {
      tags.push({ tag, resolve: (value, onError) => ({ [long]: splitGetAtt(value, onError) }) });
    } else {
      tags.push({ tag, resolve: (value: string) => ({ [long]: value }) });
    }
    tags.push({ tag, collection: 'seq', resolve: wrapCollection(long) });
    tags.push({ tag, collection: 'map', resolve: wrapCollection(long) });
  }
  return tags;
})();

/** Parses serverless.yml text into plain JS with CloudFormation intrinsics in long form. */
export function parseServerlessYaml(text: string, fileName = 'serverless.yml'): Record<string, unknown> {
  const doc = parseDocument(text, { customTags: cloudFormationTags, merge: true, prettyErrors: true });
  // An unknown tag is only a warning for the yaml package; the framework refuses it, so do we.
  const problems = [...doc.errors, ...doc.warnings.filter((warning) => warning.code === 'TAG_RESOLVE_FAILED')];
  if (problems.length > 0) {
    throw new Error(`${fileName}: ${problems.map((problem) => problem.message).join('\n')}`);
  }
  const value = doc.toJS({ maxAliasCount: -1 }) as unknown;
  if (!isPlainObject(value)) throw new Error(`${fileName}: expected a mapping at the top level`);
  return value;
}
