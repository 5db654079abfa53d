import { describe, expect, it } from 'vitest';
import { writeMemorySizes } from '../../../scripts/size/write-serverless';

const yaml = `service: gateway
provider:
  name: aws
  memorySize: 1024
  environment:
    A: b

functions:
  # Chat.
  chat:
    handler: index.handler
    timeout: 900
    events:
      - http:
          path: /v1/chat
          method: post

  keys:
    handler: index.handler
    memorySize: 256 # an old comment
    events:
      - http:
          path: /v1/keys
          method: get

resources:
  Resources:
    Table:
      Type: AWS::DynamoDB::Table
      Properties:
        memorySize: 7
`;

describe('the serverless.yml memorySize rewrite', () => {
  const settings = new Map([
    ['chat', { memoryMb: 512, comment: 'npm run size: cold init 41 ms CPU' }],
    ['keys', { memoryMb: 768, comment: 'npm run size: cold init 50 ms CPU' }],
  ]);

  it('adds a size after the handler or replaces the function’s own, touching no other line', () => {
    const written = writeMemorySizes(yaml, settings);
    const before = yaml.split('\n');
    const after = written.split('\n');
    expect(after).toContain('    memorySize: 512 # npm run size: cold init 41 ms CPU');
    expect(after).toContain('    memorySize: 768 # npm run size: cold init 50 ms CPU');
    expect(after.indexOf('    memorySize: 512 # npm run size: cold init 41 ms CPU')).toBe(after.indexOf('    handler: index.handler') + 1);
    expect(after).not.toContain('    memorySize: 256 # an old comment');
    // The provider default and the resources keep their lines.
    expect(after).toContain('  memorySize: 1024');
    expect(after).toContain('        memorySize: 7');
    expect(after.length).toBe(before.length + 1);
    const removed = before.filter((line) => !after.includes(line));
    expect(removed).toEqual(['    memorySize: 256 # an old comment']);
  });

  it('is stable: writing the same sizes again changes nothing', () => {
    const once = writeMemorySizes(yaml, settings);
    expect(writeMemorySizes(once, settings)).toBe(once);
  });

  it('leaves functions it is not given alone and keeps CRLF line ends', () => {
    const onlyKeys = writeMemorySizes(yaml, new Map([['keys', { memoryMb: 128, comment: '' }]]));
    expect(onlyKeys).toBe(yaml.replace('    memorySize: 256 # an old comment', '    memorySize: 128'));
    const crlf = yaml.replace(/\n/g, '\r\n');
    expect(writeMemorySizes(crlf, settings).split('\r\n')).toEqual(writeMemorySizes(yaml, settings).split('\n'));
  });

  it('refuses a function that is not in the functions block', () => {
    expect(() => writeMemorySizes(yaml, new Map([['Table', { memoryMb: 128, comment: '' }]]))).toThrow(/no function Table/);
    expect(() => writeMemorySizes('service: x\n', settings)).toThrow(/functions/);
  });
});
