import { HeaderMarshaller } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { crc32 } from 'node:zlib';
import type { StreamDecoder } from '../openai-format/provider-stream';

/**
 * The AWS event-stream binary framing (`application/vnd.amazon.eventstream`), decoded as bytes
 * arrive: a frame may be cut across reads and one read may hold several frames.
 *
 *   [total length u32][headers length u32][prelude CRC32][headers][payload][message CRC32]
 *
 * The prelude CRC is checked as soon as its 12 bytes are in, so a corrupted length is caught at once
 * instead of waiting for bytes that never come; the message CRC once the frame is whole (zlib's
 * native CRC32, the same IEEE polynomial). Headers are parsed by `@smithy/eventstream-codec`.
 * @see https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html
 */

export type EventStreamHeaders = ReturnType<HeaderMarshaller['parse']>;

export type EventStreamItem =
  | { kind: 'message'; headers: EventStreamHeaders; payload: Buffer }
  /** The bytes broke the framing (bad CRC or lengths); nothing after this is decoded. */
  | { kind: 'corrupt'; message: string }
  /** The stream ended; `pendingBytes` of an unfinished frame were left over. */
  | { kind: 'end'; pendingBytes: number };

const preludeBytes = 12;
/** botocore's limits: headers ≤ 128 KiB, payload ≤ 24 MiB, plus prelude and message CRC. */
const maxHeadersBytes = 128 * 1024;
const maxMessageBytes = 16 + maxHeadersBytes + 24 * 1024 * 1024;

const headerMarshaller = new HeaderMarshaller(toUtf8, fromUtf8);

export function eventStreamDecoder(): StreamDecoder<EventStreamItem> {
  let pending: Buffer = Buffer.alloc(0);
  let broken = false;

  return {
    push(chunk) {
      if (broken) return [];
      const buffer = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const items: EventStreamItem[] = [];
      let offset = 0;
      while (buffer.length - offset >= preludeBytes) {
        const totalLength = buffer.readUInt32BE(offset);
        const headersLength = buffer.readUInt32BE(offset + 4);
        if (crc32(buffer.subarray(offset, offset + 8)) !== buffer.readUInt32BE(offset + 8)) {
          items.push(corrupt('Prelude checksum mismatch'));
          break;
        }
        if (totalLength < 16 || totalLength > maxMessageBytes || headersLength > maxHeadersBytes || headersLength > totalLength - 16) {
          items.push(corrupt(`Invalid frame lengths (total ${totalLength}, headers ${headersLength})`));
          break;
        }
        if (buffer.length - offset < totalLength) break;
        const frame = buffer.subarray(offset, offset + totalLength);
        offset += totalLength;
        if (crc32(frame.subarray(0, totalLength - 4)) !== frame.readUInt32BE(totalLength - 4)) {
          items.push(corrupt('Message checksum mismatch'));
          break;
        }
        let headers: EventStreamHeaders;
        try {
          headers = headerMarshaller.parse(new DataView(frame.buffer, frame.byteOffset + preludeBytes, headersLength));
        } catch (error) {
          items.push(corrupt(`Unreadable headers: ${(error as Error).message}`));
          break;
        }
        items.push({ kind: 'message', headers, payload: frame.subarray(preludeBytes + headersLength, totalLength - 4) });
      }
      // Copy the unfinished rest so the buffer it came from is not kept alive by a few bytes.
      pending = broken ? Buffer.alloc(0) : Buffer.from(buffer.subarray(offset));
      return items;
    },
    end() {
      if (broken) return [];
      const pendingBytes = pending.length;
      pending = Buffer.alloc(0);
      return [{ kind: 'end', pendingBytes }];
    },
  };

  function corrupt(message: string): EventStreamItem {
    broken = true;
    return { kind: 'corrupt', message };
  }
}

/** A string header's value (`:event-type`, `:message-type`, `:exception-type`, …). */
export function headerText(headers: EventStreamHeaders, name: string): string | undefined {
  const header = headers[name];
  return header?.type === 'string' ? header.value : undefined;
}
