import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/core/errors';
import { allPartialNames, missingVariables, parseTemplate, renderMessages } from '../../lib/prompts/template';

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
});
