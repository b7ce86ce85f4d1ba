// The report charts: labels neither overlap nor clip at two widths, hover, values list and
// export.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { labelProblems, loadReport, QUICK, QUICK_TEXT, REFERENCE } from './helpers.mjs';

test('chart labels neither overlap nor leave the canvas at 1280 and 390 px wide', async () => {
  // A 64-seed report with nearly equal values (crowded seed labels) besides the real ones.
  const many = structuredClone(QUICK);
  many.n_seeds = 64;
  many.baseline.full.per_seed = Array.from({ length: 64 }, (_, i) => 0.01 + 1e-6 * i);
  many.idea.per_seed = Array.from({ length: 64 }, (_, i) => (i === 5 ? 0.0194 : 0.01 + 1.3e-6 * i));
  many.comparison.per_seed_diffs = many.idea.per_seed.map((v, i) => v - many.baseline.full.per_seed[i]);
  const reports = [['seed report', JSON.stringify(REFERENCE)], ['quick report', QUICK_TEXT], ['64 seeds', JSON.stringify(many)]];
  for (const [width, height] of [[1280, 900], [390, 844]]) {
    const page = await openPage(browser());
    await page.setViewportSize({ width, height });
    for (const [name, text] of reports) {
      await loadReport(page, `${name.replaceAll(' ', '-')}.json`, text);
      await page.waitForFunction(() => Object.keys(window.rdbench.drawn).length >= 5);
      await page.waitForTimeout(400); // a redraw after a size change is debounced
      const { widths, drawn } = await page.evaluate(() => {
        const out = [];
        // What was recorded is what is on screen: drawn for the canvas's current size.
        for (const [chart, id] of [['per_seed', 'chart-per-seed'], ['sweep', 'chart-sweep'], ['mechanism', 'chart-mechanism'], ['null', 'chart-null'], ['frontier', 'chart-frontier']]) {
          const c = document.getElementById(id);
          if (window.rdbench.drawn[chart].note) continue;
          const want = Math.round(c.clientWidth * devicePixelRatio);
          if (window.rdbench.drawn[chart].width !== want) out.push(`${chart}: drawn ${window.rdbench.drawn[chart].width} px wide, shown ${want}`);
        }
        return { widths: out, drawn: window.rdbench.drawn };
      });
      // The live chart, and a chart shown as a line of text (nothing to draw), have no labels to check.
      const bad = [...widths, ...Object.entries(drawn).filter(([chart, d]) => chart !== 'live' && !d.note)
        .flatMap(([chart, d]) => labelProblems(chart, d))];
      assert(bad.length === 0, `${name} at ${width}px:\n${bad.join('\n')}`);
      if (name === 'quick report') await page.locator('#charts').screenshot({ path: join(ARTIFACTS, `charts-${width}.png`) });
    }
    assert(page.errors.length === 0, `page errors: ${page.errors}`);
    await page.close();
  }
});

test('charts: hover reads exact values, values list as text alternative, PNG and SVG export', async () => {
  const page = await openPage(browser());
  await loadReport(page, 'quick_report.json', QUICK_TEXT);
  // The charts are drawn after the report is shown, and drawn again (debounced) when the
  // layout settles: hover only once the quick report's points are drawn at the shown size.
  await page.waitForFunction(() => {
    const d = window.rdbench.drawn.per_seed;
    const c = document.getElementById('chart-per-seed');
    return d && d.points.length === 10 && d.width === Math.round(c.clientWidth * devicePixelRatio);
  });
  const canvas = page.locator('#chart-per-seed');
  const tip = page.locator('#chart-per-seed ~ .tip');
  const dpr = await page.evaluate(() => devicePixelRatio);
  // A busy machine may redraw once more between reading a point and hovering it: read the
  // point again and retry, a bounded number of times.
  for (let attempt = 1; ; attempt++) {
    const p = await page.evaluate(() => window.rdbench.drawn.per_seed.points.find((x) => x.text.startsWith('seed 0: idea')));
    await page.mouse.move(0, 0);
    await canvas.hover({ position: { x: p.x / dpr, y: p.y / dpr } });
    try {
      await tip.waitFor({ state: 'visible', timeout: 3000 });
      break;
    } catch (e) {
      if (attempt === 3) throw e;
    }
  }
  const shown = await tip.textContent();
  const value = Number(shown.match(/idea ([0-9.e+-]+)/)[1]);
  assert(Math.abs(value - QUICK.idea.per_seed[0]) <= 1e-5 * QUICK.idea.per_seed[0], `hover shows ${shown}, report ${QUICK.idea.per_seed[0]}`);
  assert(await page.getAttribute('#chart-per-seed', 'role') === 'img', 'chart role');
  const items = await page.$$eval('#per_seed-data li', (l) => l.map((x) => x.textContent));
  assert(items.length === 2 * 4 + 2 && items.some((t) => t.startsWith('seed 3: baseline')), `values list: ${items}`);
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('button[data-chart=sweep][data-export=png]')]);
  const pngBytes = readFileSync(await png.path());
  assert(pngBytes.subarray(1, 4).toString() === 'PNG', 'PNG export');
  const [svg] = await Promise.all([page.waitForEvent('download'), page.click('button[data-chart=sweep][data-export=svg]')]);
  const svgText = readFileSync(await svg.path(), 'utf8');
  assert(svgText.startsWith('<svg') && svgText.includes('lr sweep'), 'SVG export');
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('the report figures are built from the charts registry, as the page had them', async () => {
  const page = await openPage(browser());
  const registry = await page.evaluate(async () => {
    const m = await import('/www/pkg/rdbench_page.js');
    await m.default();
    return JSON.parse(m.chart_registry());
  });
  // The figures' names and texts as index.html wrote them before they were built, and the
  // frontier's.
  const before = [
    ['per_seed', 'chart-per-seed', 'Per-seed comparison chart', false],
    ['sweep', 'chart-sweep', 'Learning-rate sweep chart', false],
    ['mechanism', 'chart-mechanism', 'Mechanism chart: defect and checkpoints per probe', true],
    ['null', 'chart-null', 'Permutation null distribution chart', false],
    ['frontier', 'chart-frontier', 'Frontier chart: cell evaluations against states held, per gradient schedule', true],
  ];
  assert(JSON.stringify(registry.map((c) => [c.name, c.canvas_id, c.title, c.tall])) === JSON.stringify(before), `registry ${JSON.stringify(registry)}`);
  const figures = await page.$$eval('#charts > figure', (fs) => fs.map((f) => {
    const c = f.querySelector('canvas');
    return {
      canvas: [c.id, c.className, c.getAttribute('role'), c.getAttribute('aria-label'), c.getAttribute('aria-describedby')],
      tip: f.querySelector('.tip[role=tooltip]')?.hidden,
      values: [...f.querySelectorAll('figcaption details, figcaption summary span, figcaption ul.chart-data')].map((e) => e.id),
      summary: f.querySelector('summary').textContent,
      exports: [...f.querySelectorAll('button[data-export]')].map((b) => [b.dataset.chart, b.dataset.export, b.textContent, b.getAttribute('aria-label')]),
    };
  }));
  assert(figures.length === before.length, `${figures.length} figures`);
  figures.forEach((f, i) => {
    const [name, id, title, tall] = before[i];
    const want = {
      canvas: [id, tall ? 'chart tall' : 'chart', 'img', title, `${name}-alt`],
      tip: true,
      values: [`${name}-alt`, `${name}-count`, `${name}-data`],
      summary: 'Values ',
      exports: ['png', 'svg'].map((k) => [name, k, k.toUpperCase(), `Download ${title} as ${k.toUpperCase()}`]),
    };
    assert(JSON.stringify(f) === JSON.stringify(want), `figure ${i}: ${JSON.stringify(f)}\nwant ${JSON.stringify(want)}`);
  });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('dark mode: no chart is a white box (they are shown inverted, hues kept) at 1280 and 390 px wide', async () => {
  for (const [width, height] of [[1280, 900], [390, 844]]) {
    const page = await openPage(browser(), '', { width, height });
    await loadReport(page, 'quick_report.json', QUICK_TEXT);
    await page.waitForTimeout(400);
    // The share of near-white pixels in each chart as shown (CSS filter included): the
    // screenshot's pixels, read back through an image in the page.
    const bright = async () => {
      const out = {};
      for (const id of await page.$$eval('canvas.chart', (cs) => cs.filter((c) => c.offsetWidth).map((c) => c.id))) {
        const png = (await page.locator(`#${id}`).screenshot()).toString('base64');
        out[id] = await page.evaluate(async (src) => {
          const img = new Image();
          img.src = `data:image/png;base64,${src}`;
          await img.decode();
          const c = new OffscreenCanvas(img.width, img.height);
          const g = c.getContext('2d');
          g.drawImage(img, 0, 0);
          const d = g.getImageData(0, 0, img.width, img.height).data;
          let n = 0;
          for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] > 690) n++;
          return n / (d.length / 4);
        }, png);
      }
      return out;
    };
    const light = await bright();
    assert(Object.keys(light).length >= 4 && Object.values(light).every((f) => f > 0.5), `light charts ${JSON.stringify(light)}`);
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await bright();
    assert(Object.values(dark).every((f) => f < 0.02), `white in dark mode at ${width} px: ${JSON.stringify(dark)}`);
    if (width === 1280) await page.locator('#charts').screenshot({ path: join(ARTIFACTS, 'charts-dark.png') });
    assert(page.errors.length === 0, `page errors: ${page.errors}`);
    await page.close();
  }
});
