import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../lib/core/canonical-json';

describe('canonicalJson', () => {
  it('sorts keys at every level and leaves out undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' }, u: undefined })).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });

  it('writes what JSON writes for scalars, undefined in arrays as null, and escapes keys', () => {
    expect(canonicalJson([1, undefined, 'é"\n', false, null])).toBe('[1,null,"é\\"\\n",false,null]');
    expect(canonicalJson({ 'q"k': 1 })).toBe('{"q\\"k":1}');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
  });
});
