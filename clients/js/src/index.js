// suggestd browser client: `createClient` talks to the runtime, `autocomplete` turns an
// input into an accessible combobox, `segments`/`renderHighlight` draw matched ranges.
export { Client, SuggestError, createClient, normalizeQuery, uuid } from './client.js';
export { autocomplete } from './widget.js';
export { ranges, segments, renderHighlight } from './highlight.js';
