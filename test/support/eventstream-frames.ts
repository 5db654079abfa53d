/**
 * Frames of the AWS event-stream framing (`application/vnd.amazon.eventstream`), with the headers
 * Bedrock's ConverseStream sends, encoded by `@smithy/eventstream-codec` (the codec the AWS SDKs use)
 * so a test's bytes never come from the decoder under test.
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
 */
import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/**
 * One ConverseStream event as the SDKs decode it (and the recordings store it): the `:event-type` as
 * its only key, the payload as its value.
 */
export type StreamEvent = Record<string, Record<string, unknown>>;

export function encodeMessage(message: Message): Buffer {
  return Buffer.from(codec.encode(message));
}

const json = (value: unknown) => fromUtf8(JSON.stringify(value));

export function eventFrame(type: string, payload: Record<string, unknown>): Buffer {
  return encodeMessage({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: json(payload),
  });
}

/** An exception frame, which ends a stream (e.g. `throttlingException` with `{"message": …}`). */
export function exceptionFrame(exceptionType: string, payload: Record<string, unknown>): Buffer {
  return encodeMessage({
    headers: {
      ':exception-type': { type: 'string', value: exceptionType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: json(payload),
  });
}

/** An error of the event-stream protocol itself: code and message travel in headers, with no payload. */
export function errorFrame(errorCode: string, errorMessage: string): Buffer {
  return encodeMessage({
    headers: {
      ':message-type': { type: 'string', value: 'error' },
      ':error-code': { type: 'string', value: errorCode },
      ':error-message': { type: 'string', value: errorMessage },
    },
    body: new Uint8Array(0),
  });
}

/** An event as its `:event-type` and payload. */
export function eventParts(event: StreamEvent): { type: string; payload: Record<string, unknown> } {
  const [type, payload] = Object.entries(event)[0];
  return { type, payload };
}

/** Each event's frame, in order, so a test can cut a stream at a frame boundary. */
export function streamFrames(events: StreamEvent[]): Buffer[] {
  return events.map((event) => {
    const { type, payload } = eventParts(event);
    return eventFrame(type, payload);
  });
}

export function encodeStream(events: StreamEvent[]): Buffer {
  return Buffer.concat(streamFrames(events));
}
