import { Transform } from 'node:stream';

/**
 * One transform that runs `first` then `second`, for a caller that takes a single transform (and
 * may end it itself: a push of null closes it for good, whatever the two still hold).
 */
export function chainTransforms(first: Transform, second: Transform): Transform {
  let closed = false;
  const chained = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (first.write(chunk)) callback();
      else first.once('drain', () => callback());
    },
    flush(callback) {
      second.once('end', () => callback());
      first.end();
    },
    destroy(error, callback) {
      first.destroy();
      second.destroy();
      callback(error);
    },
  });
  const push = chained.push.bind(chained);
  chained.push = (chunk: unknown, encoding?: BufferEncoding) => {
    if (closed) return false;
    if (chunk === null) closed = true;
    return push(chunk, encoding);
  };
  first.pipe(second);
  second.on('data', (chunk) => chained.push(chunk));
  first.on('error', (error) => chained.destroy(error));
  second.on('error', (error) => chained.destroy(error));
  return chained;
}
