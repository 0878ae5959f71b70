import { h, say } from './dom.js';
import * as find from './find.js';
import * as live from './live.js';
import * as overview from './overview.js';
import * as parked from './parked.js';
import * as row from './row.js';
import { source } from './source.js';
import * as subscriptions from './subscriptions.js';
import * as tenants from './tenants.js';

/**
 * The views, by the first part of the location hash (`#/row/Cust1/contact/42`). Each `mount` fills
 * the container and may return a function that stops its timers (or drops late answers).
 */
const VIEWS = { overview, row, find, parked, subscriptions, tenants, live };

let stop;

function route() {
  const [first, ...params] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  // `/` and an unknown view are the overview, marked and titled as such.
  const name = Object.hasOwn(VIEWS, first) ? first : 'overview';
  const view = VIEWS[name];
  stop?.();
  // What the last view said (a failed lookup, a redrive) is about that view, not the next one.
  say('');
  const container = document.getElementById('view');
  container.replaceChildren(h('p', {}, 'Loading…'));
  for (const link of document.querySelectorAll('nav a')) {
    if (link.getAttribute('href') === `#/${name}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  stop = view.mount(container, params);
  document.title = `${name} · crm-webhook-receiver`;
}

/** Says under the title what the page reads; on AWS, what is local only and what a parked look costs. */
function describeSource(info) {
  const line = document.getElementById('source');
  if (info.kind === 'local') {
    line.textContent = 'Reading the local runtime.';
    return;
  }
  line.replaceChildren(
    h('strong', {}, `Reading ${info.name} with your AWS credentials.`),
    ' Live is local only (npm start). Parked: ',
    info.parkedNote,
  );
}

window.addEventListener('hashchange', route);
route();
source.then(describeSource, (error) => {
  document.getElementById('source').textContent =
    `Could not tell where the data comes from: ${error.message}`;
});
