import { clockTime, h, svg } from './dom.js';

const WIDTH = 720;
const HEIGHT = 160;

/**
 * Events per minute as stacked bars (one per minute, oldest left), with a legend that gives each
 * outcome's total in words and a table of the non-empty minutes, so nothing depends on colour.
 */
export function outcomeChart({ outcomes, perMinute }) {
  const totals = Object.fromEntries(outcomes.map((outcome) => [outcome, 0]));
  let max = 1;
  for (const minute of perMinute) {
    let sum = 0;
    for (const outcome of outcomes) {
      totals[outcome] += minute[outcome];
      sum += minute[outcome];
    }
    max = Math.max(max, sum);
  }
  const step = WIDTH / perMinute.length;
  const bars = perMinute.map((minute, index) => {
    let top = HEIGHT;
    const label = clock(minute.minute);
    return outcomes.map((outcome) => {
      const height = (minute[outcome] / max) * HEIGHT;
      if (height === 0) return null;
      top -= height;
      return svg(
        'rect',
        { x: index * step + 1, y: top, width: step - 2, height, class: `o-${outcome}` },
        svg('title', {}, `${label}: ${minute[outcome]} ${outcome}`),
      );
    });
  });
  const busy = perMinute.filter((minute) => outcomes.some((outcome) => minute[outcome] > 0));
  return h(
    'figure',
    { class: 'chart' },
    svg(
      'svg',
      {
        viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
        role: 'img',
        'aria-label': `Events per minute, last hour: ${outcomes.map((o) => `${totals[o]} ${o}`).join(', ')}`,
      },
      svg('line', { x1: 0, y1: HEIGHT, x2: WIDTH, y2: HEIGHT, class: 'axis' }),
      bars,
    ),
    h(
      'div',
      { class: 'axis-labels' },
      h('span', {}, clock(perMinute[0]?.minute)),
      h('span', {}, `peak ${max} per minute`),
      h('span', {}, `${clock(perMinute.at(-1)?.minute)} (now)`),
    ),
    h(
      'figcaption',
      {},
      h(
        'ul',
        { class: 'legend', 'aria-label': 'Totals over the last hour' },
        outcomes.map((outcome) =>
          h(
            'li',
            {},
            h('span', { class: `swatch o-${outcome}`, 'aria-hidden': 'true' }),
            `${outcome}: ${totals[outcome]}`,
          ),
        ),
      ),
    ),
    h(
      'details',
      {},
      h('summary', {}, 'The same as a table'),
      busy.length === 0
        ? h('p', {}, 'No events in the last hour.')
        : h(
            'table',
            {},
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', {}, 'Minute'),
                outcomes.map((outcome) => h('th', {}, outcome)),
              ),
            ),
            h(
              'tbody',
              {},
              busy.map((minute) =>
                h(
                  'tr',
                  {},
                  h('td', {}, clock(minute.minute)),
                  outcomes.map((outcome) => h('td', {}, minute[outcome])),
                ),
              ),
            ),
          ),
    ),
  );
}

function clock(iso) {
  return iso ? clockTime(new Date(iso)) : '';
}
