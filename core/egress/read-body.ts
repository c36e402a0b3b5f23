/**
 * A response body read whole, at most `maxBytes` (`tooLarge()` is thrown past it). A body that
 * declares its length is copied chunk by chunk into one buffer of that length, as it arrives;
 * one that does not is gathered and joined at its end. Joining a 5 MB input (a 40-MP JPEG) at
 * once is one synchronous copy into fresh memory, its pages faulted in one by one: 15-20 ms of
 * CPU on the event loop in one piece (bench/stall), every other request waiting behind it. The
 * same copy spread over the chunks costs each a fraction of a millisecond, between other events.
 */
export async function readBody(
  body: AsyncIterable<Uint8Array>,
  declared: number,
  maxBytes: number,
  tooLarge: () => Error
): Promise<Buffer> {
  const sized = Number.isSafeInteger(declared) && declared > 0 && declared <= maxBytes;
  let whole = sized ? Buffer.allocUnsafeSlow(declared) : undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size + chunk.length > maxBytes) throw tooLarge();
    // More than it declared (HTTP framing ends a body at its length: a broken server's): gathered.
    if (whole && size + chunk.length > whole.length) {
      chunks.push(whole.subarray(0, size));
      whole = undefined;
    }
    if (whole) whole.set(chunk, size);
    else chunks.push(chunk);
    size += chunk.length;
  }
  if (!whole) return Buffer.concat(chunks, size);
  return size === whole.length ? whole : whole.subarray(0, size);
}
