/**
 * `h('p', { class: 'x' }, 'text', child)`: an element whose children are nodes or text (never HTML),
 * so nothing the receiver stored can inject markup. `on*` attributes become listeners.
 */
export function h(tag, attributes = {}, ...children) {
  return build(document.createElement(tag), attributes, children);
}

/** The same for SVG elements. */
export function svg(tag, attributes = {}, ...children) {
  return build(document.createElementNS('http://www.w3.org/2000/svg', tag), attributes, children);
}

function build(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(typeof child === 'object' ? child : String(child));
  }
  return element;
}

/** A `<time>` showing an ISO instant as {@link clockTime} does, the exact value in its title. */
export function time(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  const shown = Number.isNaN(date.getTime()) ? iso : clockTime(date, { seconds: true });
  return h('time', { datetime: iso, title: iso }, shown);
}

/**
 * Every time on the page in one format: the reader's locale with two-digit hours and minutes (and
 * seconds where asked), preceded by the date when it is not today.
 */
export function clockTime(date, { seconds = false, now = new Date() } = {}) {
  const clock = date.toLocaleTimeString([], {
    hour: '2-digit',
    minute: '2-digit',
    ...(seconds && { second: '2-digit' }),
  });
  if (date.toDateString() === now.toDateString()) return clock;
  return `${date.toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' })} ${clock}`;
}

/** A value as compact JSON, or a dash. */
export function json(value) {
  return value === undefined || value === null ? '—' : JSON.stringify(value);
}

/** A block with a body, pretty-printed when it is JSON. */
export function bodyBlock(body) {
  let text = body;
  try {
    text = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // not JSON (or base64): shown as received
  }
  return h('pre', { class: 'body' }, text);
}

/** A link to the event lookup for `eventId`. */
export function eventLink(eventId) {
  return eventId ? h('a', { href: `#/find/${encodeURIComponent(eventId)}`, class: 'mono' }, eventId) : '—';
}

/** Writes a message to the page's status line (read by screen readers). */
export function say(text) {
  document.getElementById('status').textContent = text;
}

/**
 * Asks in the page's `<dialog id="confirm">` (Enter or a click confirms, Escape cancels); true when
 * confirmed.
 */
export async function confirmed(title, text, ok) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = ok;
  dialog.returnValue = '';
  dialog.showModal();
  await new Promise((resolve) => dialog.addEventListener('close', resolve, { once: true }));
  return dialog.returnValue === 'ok';
}

/**
 * Runs `load` now and every `ms`, and hands each answer to `render` (each failure to `onError`)
 * unless the view was left since: an answer that arrives late must not draw over the next view.
 * `run` loads again at once; the view's `mount` returns `stop`.
 */
export function poll(ms, load, render, onError) {
  let left = false;
  const run = () =>
    load().then(
      (data) => {
        if (!left) render(data);
      },
      (error) => {
        if (!left) onError(error);
      },
    );
  const timer = setInterval(run, ms);
  run();
  return {
    run,
    stop: () => {
      left = true;
      clearInterval(timer);
    },
  };
}
