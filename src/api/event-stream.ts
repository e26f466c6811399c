// Reading a `text/event-stream` body (the job and organization feeds) as the HTML living standard frames it:
// lines of `field: value`, events ended by a blank line, comments starting with `:`.

export interface StreamEvent {
  event: string;
  id: string | undefined;
  data: string;
}

/** What a feed's body holds: events, and comments (`keepalive`, or why the server ended the stream). */
export type StreamItem = { kind: 'event'; value: StreamEvent } | { kind: 'comment'; text: string };

export async function* readEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamItem> {
  const decoder = new TextDecoder();
  let buffered = '';
  let fields: { event?: string; id?: string; data: string[] } = { data: [] };
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + (buffered.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (fields.data.length > 0 || fields.event !== undefined) {
          const value = { event: fields.event ?? 'message', id: fields.id, data: fields.data.join('\n') };
          yield { kind: 'event', value };
        }
        fields = { data: [] };
      } else if (line.startsWith(':')) {
        yield { kind: 'comment', text: line.slice(1).trim() };
      } else {
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (name === 'event') fields.event = value;
        else if (name === 'id') fields.id = value;
        else if (name === 'data') fields.data.push(value);
      }
    }
  }
}
