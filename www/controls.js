// The configuration controls: built from the engine's schema (config_schema() of the charts
// wasm, generated from the knob table in crates/core/src/config/), so the page has no defaults, limits or presets of its
// own. The controls' texts are the single state: every edit collects every text, the Rust
// parser (parse_config) turns them into the config that a run would send plus an error list,
// and the URL hash is rewritten from the canonical texts. Nothing is cached beside the texts,
// so what the page shows is what runs.

import { $, el } from './dom.js';

/** Two significant digits: what a log slider's position means as a value. */
const round2 = (v) => Number(v.toPrecision(2));

/**
 * schema: the parsed config_schema(); parseConfig(texts) -> {config, errors, texts};
 * backends: [{value, label}] (the first is the default); onChange(current) after each parse.
 */
export function createControls({ schema, parseConfig, backends, onChange }) {
  const knobs = schema.knobs;
  const byKey = new Map(knobs.map((k) => [k.key, k]));
  const defaultTexts = parseConfig({}).texts;
  const defaultBackend = backends[0].value;
  let current = { config: null, errors: [], texts: {}, backend: defaultBackend };

  // ------------------------------------------------------------ building
  function sliderAttrs(knob) {
    const s = knob.slider;
    // A log slider moves in log10 units (its step is in those units too); its value is
    // rounded to two significant digits.
    return s.log
      ? { min: String(Math.log10(s.min)), max: String(Math.log10(s.max)), step: String(s.step) }
      : { min: String(s.min), max: String(s.max), step: String(s.step) };
  }

  function sliderToText(knob, slider) {
    const v = Number(slider.value);
    if (knob.slider.log) return String(round2(10 ** v));
    return knob.kind === 'int' ? String(Math.round(v)) : String(Number(v.toPrecision(6)));
  }

  /** Move a slider to a parsed value. Out of range it just pins at its end: text is untouched. */
  function placeSlider(knob, slider, value) {
    if (!Number.isFinite(value)) return;
    slider.value = String(knob.slider.log ? (value > 0 ? Math.log10(value) : slider.min) : value);
    announce(knob, slider, String(value));
  }

  /** Screen readers read the value, not the slider's position (a log slider's is an exponent). */
  function announce(knob, slider, text) {
    slider.setAttribute('aria-valuetext', knob.unit ? `${text} ${knob.unit}` : text);
  }

  function labelFor(knob, forId) {
    const label = el('label', { htmlFor: forId, textContent: knob.label });
    if (knob.unit) label.append(' ', el('span', { className: 'unit', textContent: `(${knob.unit})` }));
    return label;
  }

  function helpAndError(knob, field) {
    const help = el('p', { className: 'help', id: `${knob.key}-help`, textContent: knob.help });
    const error = el('p', { className: 'error', id: `${knob.key}-error`, hidden: true });
    error.setAttribute('aria-live', 'polite');
    // The error sits right under the control, where the eye is; the help below it.
    field.append(error, help);
    // The length is the knob memory follows: the estimate's breakdown is shown under it.
    if (knob.key === 'seq_len') {
      const note = el('p', { className: 'help memory-note', id: 'seq_len-memory' });
      note.setAttribute('aria-live', 'polite');
      error.after(note);
    }
  }

  function textBox(knob, id) {
    const box = el('input', { type: 'text', id, autocomplete: 'off', spellcheck: false });
    box.inputMode = knob.kind === 'int' ? 'numeric' : knob.kind === 'float' ? 'decimal' : 'text';
    box.setAttribute('aria-describedby', `${knob.key}-help ${knob.key}-error`);
    box.addEventListener('input', () => update(knob.key));
    return box;
  }

  function buildNumeric(knob) {
    const field = el('div', { className: `field ${knob.slider ? 'slider' : 'inline'}` });
    const box = textBox(knob, knob.key);
    field.append(labelFor(knob, knob.key));
    if (knob.slider) {
      const slider = el('input', { type: 'range', id: `${knob.key}-range`, ...sliderAttrs(knob) });
      slider.setAttribute('aria-label', `${knob.label} slider${knob.slider.log ? ' (log scale)' : ''}`);
      slider.addEventListener('input', () => {
        box.value = sliderToText(knob, slider);
        announce(knob, slider, box.value);
        update(knob.key, slider);
      });
      field.append(slider);
    }
    field.append(box);
    return field;
  }

  function buildChoice(knob) {
    const field = el('div', { className: 'field select' });
    const select = el('select', { id: knob.key });
    for (const c of knob.choices) select.append(el('option', { value: c.value, textContent: c.label }));
    select.setAttribute('aria-describedby', `${knob.key}-help ${knob.key}-error`);
    select.addEventListener('change', () => update(knob.key));
    field.append(labelFor(knob, knob.key), select);
    return field;
  }

  function lrRow(knob, i, text) {
    const row = el('div', { className: 'lr-row' });
    const slider = el('input', { type: 'range', ...sliderAttrs(knob) });
    slider.setAttribute('aria-label', `learning rate ${i + 1} (log scale)`);
    const box = el('input', { type: 'text', id: `lr-${i}`, value: text, autocomplete: 'off', spellcheck: false });
    box.inputMode = 'decimal';
    box.setAttribute('aria-label', `learning rate ${i + 1}`);
    box.setAttribute('aria-describedby', `lrs-help lrs-error`);
    const remove = el('button', { type: 'button', textContent: '×', className: 'ghost small' });
    remove.setAttribute('aria-label', `remove learning rate ${i + 1}`);
    slider.addEventListener('input', () => {
      box.value = sliderToText(knob, slider);
      announce(knob, slider, box.value);
      update('lrs', slider);
    });
    box.addEventListener('input', () => {
      // A pasted list ("0.001,0.01") becomes one row per lr, so the rows show what runs.
      if (box.value.includes(',')) {
        const texts = lrTexts();
        const parts = box.value.split(',').map((s) => s.trim());
        setLrTexts([...texts.slice(0, i), ...parts, ...texts.slice(i + 1)]);
        $(`lr-${i + parts.length - 1}`).focus();
      }
      update('lrs');
    });
    remove.addEventListener('click', () => {
      setLrTexts(lrTexts().filter((_, j) => j !== i));
      update('lrs');
      // The row and its button are gone: keep the keyboard user in the list.
      $(`lr-${Math.max(0, i - 1)}`).focus();
    });
    row.append(slider, box, remove);
    return row;
  }

  function buildLrs(knob) {
    const field = el('fieldset', { className: 'field lrs' });
    field.append(el('legend', { textContent: knob.label }));
    const list = el('div', { id: 'lr-list' });
    const add = el('button', { type: 'button', id: 'lr-add', className: 'ghost small', textContent: '+ add lr' });
    add.addEventListener('click', () => {
      const texts = lrTexts();
      // The next lr: three times the last valid one, skipping values already listed.
      const values = texts.map(Number).filter((v) => Number.isFinite(v) && v > 0);
      let next = round2((values.at(-1) ?? knob.default.at(-1)) * 3);
      while (values.includes(next)) next = round2(next * 1.5);
      setLrTexts([...texts, String(next)]);
      update('lrs');
      $(`lr-${texts.length}`).focus();
    });
    field.append(list, add);
    return field;
  }

  function buildText(knob) {
    const field = el('div', { className: 'field inline' });
    field.append(labelFor(knob, knob.key), textBox(knob, knob.key));
    return field;
  }

  function build() {
    const main = $('knobs');
    const advanced = $('advanced-knobs');
    main.replaceChildren();
    advanced.replaceChildren();
    for (const knob of knobs) {
      const field = knob.kind === 'int' || knob.kind === 'float' ? buildNumeric(knob)
        : knob.kind === 'choice' ? buildChoice(knob)
          : knob.kind === 'lr_list' ? buildLrs(knob)
            // A kind this page does not know yet still gets a control: its text, checked by Rust.
            : buildText(knob);
      field.dataset.key = knob.key;
      if (knob.flag) field.title = `CLI: ${knob.flag}`;
      helpAndError(knob, field);
      (knob.advanced ? advanced : main).append(field);
    }
    const n = knobs.filter((k) => k.advanced).length;
    $('advanced-summary').textContent = `Advanced (${n} settings)`;
    $('advanced').hidden = n === 0;

    const backend = $('backend');
    backend.replaceChildren(...backends.map((b) => el('option', { value: b.value, textContent: b.label })));
    backend.addEventListener('change', () => update('backend'));

    const presets = $('presets');
    presets.replaceChildren();
    for (const p of schema.presets) {
      // The time beside the label is the page's (presetTime): what the preset costs is seen
      // without hovering.
      const b = el('button', { type: 'button', id: `preset-${p.name}`, className: 'ghost preset', title: p.help },
        el('span', { className: 'preset-label', textContent: p.label }),
        el('span', { className: 'preset-time', id: `preset-${p.name}-time` }));
      b.setAttribute('aria-pressed', 'false');
      b.addEventListener('click', () => {
        setTexts(p.texts);
        update();
      });
      presets.append(b);
    }
  }

  // ------------------------------------------------------------ texts in and out
  function lrTexts() {
    return [...document.querySelectorAll('#lr-list input[type=text]')].map((b) => b.value);
  }

  function setLrTexts(texts) {
    const knob = byKey.get('lrs');
    $('lr-list').replaceChildren(...texts.map((t, i) => lrRow(knob, i, t)));
    $('lr-add').disabled = texts.length >= (knob.max_len ?? Infinity);
    for (const row of document.querySelectorAll('#lr-list .lr-row')) row.querySelector('button').disabled = texts.length <= 1;
  }

  /** Every control's text, exactly as shown. */
  function collect() {
    const texts = {};
    for (const k of knobs) texts[k.key] = k.kind === 'lr_list' ? lrTexts().join(',') : $(k.key).value;
    return texts;
  }

  /** Show texts in the controls (missing keys keep what they show). */
  function setTexts(texts) {
    for (const k of knobs) {
      if (!(k.key in texts)) continue;
      const t = texts[k.key];
      if (k.kind === 'lr_list') setLrTexts(t === '' ? [''] : t.split(',').map((s) => s.trim()));
      else $(k.key).value = t;
    }
  }

  // ------------------------------------------------------------ the one update
  /** Parse every text, mark errors, sync sliders and the hash. `source`: the control moved. */
  function update(changedKey = null, source = null) {
    const texts = collect();
    const parsed = parseConfig(texts);
    const backend = $('backend').value;
    // The hash carries what the controls show: canonical texts, and a field in error as typed.
    const shown = { ...parsed.texts };
    for (const e of parsed.errors) if (e.field in texts) shown[e.field] = texts[e.field];
    current = { config: parsed.config, errors: parsed.errors, texts: shown, backend, memory: parsed.memory ?? '', memoryDetail: parsed.memoryDetail ?? '' };
    markErrors(parsed);
    syncSliders(parsed, source);
    writeHash(hashOf(shown, backend));
    markPreset(parsed.config);
    onChange(current, changedKey);
    return current;
  }

  /** The preset the form shows now, if any, is pressed. */
  function markPreset(config) {
    for (const p of schema.presets) {
      const same = config !== null && knobs.every((k) => JSON.stringify(config[k.key]) === JSON.stringify(p.config[k.key]));
      $(`preset-${p.name}`)?.setAttribute('aria-pressed', String(same));
    }
  }

  /** Show how long a preset takes (`text`, e.g. "≈ 42 s"; '' while unknown), `title` the
   *  estimate's figures. */
  function presetTime(name, text, title = '') {
    const t = $(`preset-${name}-time`);
    t.textContent = text;
    t.title = title;
  }

  function errorsByField(errors) {
    const by = new Map();
    for (const e of errors) {
      if (!by.has(e.field)) by.set(e.field, []);
      by.get(e.field).push(e.message);
    }
    return by;
  }

  function markErrors(parsed) {
    const by = errorsByField(parsed.errors);
    let advancedInvalid = false;
    for (const k of knobs) {
      const messages = by.get(k.key) ?? [];
      const box = $(`${k.key}-error`);
      box.textContent = messages.join('\n');
      box.hidden = messages.length === 0;
      const field = box.closest('.field');
      field.classList.toggle('invalid', messages.length > 0);
      if (messages.length && k.advanced) advancedInvalid = true;
      if (k.kind === 'lr_list') markLrRows(messages.length > 0);
      else $(k.key).setAttribute('aria-invalid', String(messages.length > 0));
    }
    // An error inside the collapsed section must not be hidden from view.
    if (advancedInvalid) $('advanced').open = true;
  }

  /** Mark the lr rows at fault: each row's text is checked alone by the same parser; if
   *  every row is fine alone the list as a whole is wrong (a duplicate), so all are marked. */
  function markLrRows(listInvalid) {
    const boxes = [...document.querySelectorAll('#lr-list input[type=text]')];
    const alone = boxes.map((b) => listInvalid && parseConfig({ lrs: b.value }).errors.some((e) => e.field === 'lrs'));
    const any = alone.some(Boolean);
    boxes.forEach((b, i) => b.setAttribute('aria-invalid', String(listInvalid && (alone[i] || !any))));
  }

  function syncSliders(parsed, source) {
    const bad = new Set(parsed.errors.map((e) => e.field));
    for (const k of knobs) {
      if (!k.slider || bad.has(k.key)) continue;
      if (k.kind === 'lr_list') {
        const values = parsed.texts.lrs.split(',').map(Number);
        document.querySelectorAll('#lr-list input[type=range]').forEach((s, i) => {
          if (s !== source) placeSlider(k, s, values[i]);
        });
      } else {
        const s = $(`${k.key}-range`);
        if (s !== source) placeSlider(k, s, Number(parsed.texts[k.key]));
      }
    }
  }

  // ------------------------------------------------------------ the URL hash
  // Chromium ignores history updates beyond 200 in 10 s (a slider drag fires ~60 input
  // events a second), which would leave a stale link. So the hash is written at most every
  // 100 ms, the last state always last.
  // A link opened meanwhile changes the URL before its hashchange is handled: a write still
  // pending from the form's last edit must not put the old settings back over it
  // (`lastHash`: the hash this page last wrote or loaded).
  let pendingHash = null;
  let hashTimer = null;
  let lastHashWrite = -Infinity;
  let lastHash = location.hash;
  function writeHash(hash) {
    pendingHash = hash;
    if (hashTimer !== null) return;
    const flush = () => {
      hashTimer = null;
      lastHashWrite = performance.now();
      if (location.hash !== lastHash && location.hash !== pendingHash) return; // a link: it loads next
      if (location.hash !== pendingHash) history.replaceState(null, '', pendingHash);
      lastHash = pendingHash;
    };
    const wait = lastHashWrite + 100 - performance.now();
    if (wait <= 0) flush();
    else hashTimer = setTimeout(flush, wait);
  }

  function hashOf(texts, backend) {
    const p = new URLSearchParams();
    for (const k of knobs) p.set(k.key, texts[k.key] ?? '');
    p.set('backend', backend);
    return '#' + p.toString().replaceAll('%2C', ',');
  }

  // ------------------------------------------------------------ a link's values
  let linkNotes = new AbortController();
  // A link's value a select has no option for gets one, marked, so the parser sees it and
  // Run stays off; it goes once another option is chosen or another link loads.
  function offerLinkChoice(select, text) {
    const option = el('option', { value: text, textContent: `${text} (from the link: not valid)` });
    option.dataset.fromLink = 'true';
    select.append(option);
    select.addEventListener('change', () => option.remove(), { once: true });
  }

  /** Under a field, say that the link gave its key more than once (until it is edited, or
   *  another link loads: `signal`). */
  function noteRepeated(key, texts, signal) {
    const field = document.querySelector(`#config [data-key="${key}"]`);
    if (!field) return;
    const note = el('p', { className: 'link-note', id: `${key}-link-note`,
      textContent: `The link gives ${key} ${texts.length} times (${texts.map((t) => JSON.stringify(t)).join(', ')}): this shows the last.` });
    field.querySelector(':scope > .error').after(note);
    const boxes = [...field.querySelectorAll('input[type=text], select')];
    const describe = (c, add) => {
      const ids = (c.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id && id !== note.id);
      c.setAttribute('aria-describedby', [...ids, ...(add ? [note.id] : [])].join(' '));
    };
    for (const c of boxes) describe(c, true);
    const drop = () => {
      note.remove();
      for (const c of boxes) describe(c, false);
    };
    for (const type of ['input', 'change']) field.addEventListener(type, drop, { once: true, signal });
    signal.addEventListener('abort', drop, { once: true });
  }

  /**
   * Load the form from a URL hash. Missing keys take the defaults. A value the parser
   * rejects stays in its control as the link has it, marked with the parser's message, so
   * Run stays off until it is fixed: a link never runs what it did not say. Returns what
   * the banner lists (lines naming label and key): `invalid` (values rejected), `repeated`
   * (a key given more than once: the control shows the last, and says so under it) and
   * `dropped` (keys that are no setting, and a backend that is not one: the default).
   */
  function loadHash(hash) {
    lastHash = String(hash);
    const params = new URLSearchParams(String(hash).replace(/^#/, ''));
    const given = new Map();
    for (const [key, text] of params) given.set(key, [...(given.get(key) ?? []), text]);
    const texts = {};
    const repeated = [];
    const dropped = [];
    let backend = defaultBackend;
    for (const [key, values] of given) {
      const text = values.at(-1);
      const name = key === 'backend' ? `Backend (backend)` : byKey.has(key) ? `${byKey.get(key).label} (${key})` : key;
      if (values.length > 1) repeated.push(`${name}: given ${values.length} times (${values.map((v) => JSON.stringify(v)).join(', ')}); the form shows the last`);
      if (key === 'backend') {
        if (backends.some((b) => b.value === text)) backend = text;
        else dropped.push(`Backend (backend): must be one of ${backends.map((b) => b.value).join(', ')} (got "${text}"); the default, ${defaultBackend}, is used`);
      } else if (byKey.has(key)) texts[key] = text;
      else dropped.push(`${key}: not a setting; ignored`);
    }
    for (const o of document.querySelectorAll('#config option[data-from-link]')) o.remove();
    linkNotes.abort();
    linkNotes = new AbortController();
    // Valid texts are shown canonical (as the URL will carry them); a text in error as given.
    const parsed = parseConfig(texts);
    const bad = new Set(parsed.errors.map((e) => e.field));
    const shown = { ...defaultTexts };
    for (const [key, text] of Object.entries(texts)) shown[key] = bad.has(key) ? text : parsed.texts[key];
    for (const k of knobs) {
      if (k.kind === 'choice' && ![...$(k.key).options].some((o) => o.value === shown[k.key])) offerLinkChoice($(k.key), shown[k.key]);
    }
    setTexts(shown);
    $('backend').value = backend;
    for (const [key, values] of given) if (values.length > 1 && byKey.has(key)) noteRepeated(key, values, linkNotes.signal);
    const { errors } = update();
    const invalid = errors.map((e) => (byKey.has(e.field) ? `${byKey.get(e.field).label} (${e.field}): ${e.message}` : `${e.field}: ${e.message}`));
    return { invalid, repeated, dropped };
  }

  function setBackend(value) {
    $('backend').value = value;
    return update('backend');
  }

  /** While a bench runs the controls show its settings and take no edit (the URL keeps
   *  them too): the form's fields and the presets are disabled. */
  function setLocked(locked) {
    $('config-fields').disabled = locked;
    for (const b of document.querySelectorAll('#presets button')) b.disabled = locked;
  }

  build();
  return {
    loadHash,
    setBackend,
    presetTime,
    /** The presets: {name, label, help, config, texts (what the form shows)}. */
    presets: schema.presets,
    setLocked,
    /** {config (null while any control is invalid), errors, texts, backend}. */
    get current() { return current; },
    label: (key) => byKey.get(key)?.label ?? key,
    /** Whether `key` names a setting (or the backend). */
    isSetting: (key) => key === 'backend' || byKey.has(key),
    hash: () => hashOf(current.texts, current.backend),
  };
}
