import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventData, SseEventSplitter } from '../../lib/wire/sse';

describe('SseEventSplitter', () => {
  it('yields whole events however the bytes are cut', () => {
    const text = 'data: {"a":1}\r\n\r\n: keep-alive\n\ndata: é€😀\n\r\n\r\ndata: [DONE]\r\rdata: 2\r\ndata: 3\r\n\r\n';
    const bytes = Buffer.from(text);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 10 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const splitter = new SseEventSplitter();
        const events: string[] = [];
        let start = 0;
        for (const point of [...points, bytes.length]) {
          events.push(...splitter.push(bytes.subarray(start, point)));
          start = point;
        }
        events.push(...splitter.end());
        expect(events).toEqual(['data: {"a":1}', ': keep-alive', 'data: é€😀', 'data: [DONE]', 'data: 2\ndata: 3']);
      }),
    );
  });

  it('returns a last event that has no blank line after it', () => {
    const splitter = new SseEventSplitter();
    expect(splitter.push(Buffer.from('data: 1\n\ndata: 2'))).toEqual(['data: 1']);
    expect(splitter.end()).toEqual(['data: 2']);
  });
});

describe('eventData', () => {
  it('joins data lines and removes one optional space', () => {
    expect(eventData('data: {"a":\ndata:1}')).toBe('{"a":\n1}');
    expect(eventData('event: message\nid: 3\ndata:x')).toBe('x');
    expect(eventData(': comment')).toBeUndefined();
  });
});
