import Mustache from 'mustache';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/core/errors';
import {
  allPartialNames,
  maxRenderBytes,
  maxSectionDepth,
  missingVariables,
  parseTemplate,
  printable,
  renderMessages,
  renderText,
} from '../../lib/prompts/template';

/** The 400 a call throws, for matching its code and message. */
function refusal(call: () => unknown): { status: number; code: string | null; param: string | null; message: string } {
  try {
    call();
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    const { code, param, message } = error.toBody().error;
    return { status: error.status, code, param, message };
  }
  throw new Error('expected a GatewayError');
}

describe('prompt templates', () => {
  it('reads a JSON message list, or plain text as one user message', () => {
    expect(parseTemplate('[{"role":"user","content":"Hi {{n}}"}]')).toEqual({ kind: 'messages', messages: [{ role: 'user', content: 'Hi {{n}}' }] });
    expect(parseTemplate('Hi {{n}}')).toEqual({ kind: 'text', messages: [{ role: 'user', content: 'Hi {{n}}' }] });
  });

  it.each([
    ['JSON that is not a list', '{"role":"user"}'],
    ['an empty list', '[]'],
    ['a number', '42'],
    ['a message without a role', '[{"content":"x"}]'],
    ['unclosed section', 'Hi {{#a}}'],
    ['unclosed section inside a message', '[{"role":"user","content":"{{#a}}"}]'],
  ])('refuses %s with a 400', (_, source) => {
    expect(() => parseTemplate(source)).toThrow(GatewayError);
  });

  it('never escapes HTML and keeps values that look like JSON or tags', () => {
    const template = parseTemplate('[{"role":"user","content":"{{a}}|{{{a}}}|{{&a}}"}]');
    const value = '<b>"x" & \'y\'</b>\n{"k": "{{v}}"}';
    expect(renderMessages(template, { a: value }, {})[0]!.content).toBe(`${value}|${value}|${value}`);
  });

  it('finds variables that would print but are missing, as Mustache looks them up', () => {
    expect(missingVariables('{{a}} {{b.c}}', { a: 1, b: { c: 2 } }, {})).toEqual([]);
    expect(missingVariables('{{a}} {{b.c}}', { b: {} }, {})).toEqual(['a', 'b.c']);
    expect(missingVariables('{{#list}}{{name}}{{top}}{{/list}}', { list: [{ name: 'x' }], top: 1 }, {})).toEqual([]);
    expect(missingVariables('{{#list}}{{name}}{{/list}}', { list: [{ name: 'x' }, {}] }, {})).toEqual(['name']);
    expect(missingVariables('{{#off}}{{inside}}{{/off}}{{^off}}{{other}}{{/off}}', {}, {})).toEqual(['other']);
    expect(missingVariables('{{>p}}', {}, { p: 'Hello {{who}}' })).toEqual(['who']);
    expect(missingVariables('{{! just a comment }}', {}, {})).toEqual([]);
  });

  it('follows partials that include partials, without looping', () => {
    const template = parseTemplate('{{>a}}');
    expect(allPartialNames(template, { a: '{{>b}}', b: '{{>a}} {{>c}}' }).sort()).toEqual(['a', 'b', 'c']);
  });

  it('refuses to render with a missing variable or partial, naming them', () => {
    const template = parseTemplate('{{>tone}} {{x}} {{y}}');
    expect(() => renderMessages(template, { x: 1 }, {})).toThrow(/partials that do not exist.*tone/);
    expect(() => renderMessages(template, {}, { tone: 'ok' })).toThrow(/not given: x, y/);
  });

  it('renders as Mustache does for plain data: sections, inverted sections, dotted names, standalone lines and indented partials', () => {
    const view = {
      name: 'Ada',
      user: { first: 'Ada', address: { city: 'London' } },
      items: [{ n: 1 }, { n: 2 }],
      tags: ['x', 'y'],
      empty: [],
      off: false,
      on: true,
      zero: 0,
      word: 'w',
    };
    const partials = { line: 'one {{name}}\ntwo\n', inner: '[{{>leaf}}]', leaf: '{{n}}' };
    const templates = [
      'Hi {{name}}, {{user.first}} of {{user.address.city}}',
      '{{#items}}- {{n}} {{name}}\n{{/items}}',
      '{{#tags}}{{.}},{{/tags}}{{^empty}}none{{/empty}}',
      '{{#off}}no{{/off}}{{^off}}yes{{/off}}{{#on}}{{name}}{{/on}}{{#zero}}z{{/zero}}{{#word}}{{.}}{{/word}}',
      'a\n  {{#on}}\n  kept\n  {{/on}}\nb',
      'list:\n  {{>line}}\nend',
      'inline {{>line}} end',
      '{{#items}}{{>inner}}{{/items}}',
      '{{=<% %>=}}<% name %> {{name}}',
      '{{! comment }}{{{name}}}{{&name}}',
    ];
    for (const template of templates)
      expect(renderText(template, view, partials), template).toBe(Mustache.render(template, view, partials, { escape: String }));
  });

  it('prints values as data: text as given, numbers and booleans as JSON writes them, null as nothing, lists and objects as JSON', () => {
    expect([printable('a "b"'), printable(2.5), printable(true), printable(null), printable(['p', { q: 1 }])]).toEqual([
      'a "b"',
      '2.5',
      'true',
      '',
      '["p",{"q":1}]',
    ]);
    // Nothing of the value is called: a toString key is data, and so is toJSON.
    expect(renderText('{{a}}', { a: { toString: 'x', valueOf: 1, toJSON: 'y' } }, {})).toBe('{"toString":"x","valueOf":1,"toJSON":"y"}');
    expect(renderText('{{#a}}{{toString}}{{/a}}', { a: { toString: 'x' } }, {})).toBe('x');
  });

  it('never looks names up on the prototype', () => {
    expect(missingVariables('{{toString}} {{constructor.name}} {{a.hasOwnProperty}} {{s.length}}', { a: {}, s: 'abc' }, {})).toEqual([
      'toString',
      'constructor.name',
      'a.hasOwnProperty',
      's.length',
    ]);
    expect(renderText('{{#constructor}}x{{/constructor}}{{^valueOf}}empty{{/valueOf}}', {}, {})).toBe('empty');
    expect(refusal(() => renderMessages(parseTemplate('{{>constructor}}'), {}, {}))).toMatchObject({ status: 400, code: 'partial_not_found' });
    const partials = JSON.parse('{"__proto__": "p", "constructor": "c"}') as Record<string, string>;
    expect(renderText('{{>__proto__}}{{>constructor}}', {}, partials)).toBe('pc');
  });

  it(`refuses sections nested deeper than ${maxSectionDepth}, without overflowing the stack`, () => {
    const nested = (depth: number) => `${'{{#a}}'.repeat(depth)}x${'{{/a}}'.repeat(depth)}`;
    expect(renderMessages(parseTemplate(nested(maxSectionDepth)), { a: true }, {})[0]!.content).toBe('x');
    for (const depth of [maxSectionDepth + 1, 5_000]) {
      expect(refusal(() => parseTemplate(nested(depth)))).toMatchObject({
        status: 400,
        code: 'template_too_deep',
        param: 'string',
        message: expect.stringContaining(`the limit is ${maxSectionDepth}`),
      });
    }
    // A partial saved before the limit is refused when rendered.
    expect(refusal(() => renderText('{{>deep}}', { a: true }, { deep: nested(5_000) }))).toMatchObject({ code: 'template_too_deep' });
  });

  it('refuses partials that include themselves or chain deeper than 10 while rendering', () => {
    expect(refusal(() => renderText('{{>a}}', {}, { a: 'x{{>b}}', b: 'y{{>a}}' }))).toMatchObject({
      code: 'partial_recursion',
      message: expect.stringContaining('a → b → a'),
    });
    const chain = (levels: number) =>
      Object.fromEntries(Array.from({ length: levels }, (_, index) => [`p${index + 1}`, index + 1 < levels ? `{{>p${index + 2}}}` : 'end']));
    expect(renderText('{{>p1}}', {}, chain(10))).toBe('end');
    expect(refusal(() => renderText('{{>p1}}', {}, chain(11)))).toMatchObject({ code: 'partial_chain_too_deep', message: expect.stringContaining('p1 → p2') });
  });

  it('stops a render past 1 MB of output, over all the texts of a template', () => {
    const doubling: Record<string, string> = { d0: '{{v}}' };
    for (let index = 1; index < 10; index++) doubling[`d${index}`] = `{{>d${index - 1}}}{{>d${index - 1}}}`;
    expect(refusal(() => renderText('{{>d9}}', { v: 'x'.repeat(6_000) }, doubling))).toMatchObject({
      status: 400,
      code: 'prompt_render_too_large',
      param: 'variables',
      message: expect.stringContaining('1 MB'),
    });
    const half = 'y'.repeat(maxRenderBytes / 2 + 1);
    const twoMessages = parseTemplate(
      JSON.stringify([
        { role: 'system', content: '{{v}}' },
        { role: 'user', content: '{{v}}' },
      ]),
    );
    expect(renderMessages(parseTemplate('{{v}}'), { v: half }, {})[0]!.content).toBe(half);
    expect(refusal(() => renderMessages(twoMessages, { v: half }, {}))).toMatchObject({ code: 'prompt_render_too_large' });
    // Bytes, not characters: three-byte characters reach the limit at a third of the length.
    expect(refusal(() => renderText('{{v}}', { v: '€'.repeat(maxRenderBytes / 3 + 1) }, {}))).toMatchObject({ code: 'prompt_render_too_large' });
  });

  it('stops a render whose work budget is spent, even when it prints nothing', () => {
    const list = Array.from({ length: 200 }, (_, index) => index);
    expect(refusal(() => renderText('{{#l}}{{#l}}{{#l}}{{! nothing }}{{/l}}{{/l}}{{/l}}', { l: list }, {}))).toMatchObject({
      code: 'prompt_render_too_complex',
      param: 'variables',
    });
    // Missing-variable checks walk the same way, within the same budget.
    expect(refusal(() => missingVariables('{{#l}}{{#l}}{{#l}}{{x}}{{/l}}{{/l}}{{/l}}', { l: list }, {}))).toMatchObject({ code: 'prompt_render_too_complex' });
    expect(renderText('{{#l}}{{#l}}.{{/l}}{{/l}}', { l: list }, {})).toHaveLength(40_000);
  });
});
