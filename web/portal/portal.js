// Enhancement only: the voucher form works without it (a form POST the server answers with 303).
// State lives on the server; nothing is kept in cookies or storage (captive mini-browsers drop them).
(function () {
  'use strict';
  var M = JSON.parse(document.getElementById('portal-messages').textContent);
  var C = JSON.parse(document.getElementById('portal-context').textContent);
  var $ = function (id) { return document.getElementById(id); };
  var fmt = function (s, v) { return String(s || '').replace(/\{(\w+)\}/g, function (_, k) { return v && v[k] != null ? v[k] : ''; }); };
  var qs = '?hotspot_id=' + encodeURIComponent(C.hotspot_id);
  var FIELD = {
    voucher_not_found: 'code', voucher_expired: 'code', voucher_exhausted: 'code', voucher_ssid_not_allowed: 'code', too_many_attempts: 'code',
    voucher_not_yet_valid: 'code', terms_not_accepted: 'accept_terms', phone_invalid: 'phone', phone_prefix_blocked: 'phone', email_invalid: 'email',
    sponsor_not_allowed: 'sponsor_email',
    pms_guest_not_found: 'room-number', pms_unavailable: 'room-number'
  };

  function message(code, body) {
    var key = 'err_' + code;
    if (code === 'otp_invalid') return fmt(M[key], { attempts: body.attempts_left });
    if (code === 'voucher_not_yet_valid') return fmt(M[key], { from: startTime(body.valid_from) });
    if (code === 'otp_rate_limited' || code === 'too_many_attempts' || code === 'sponsor_rate_limited') return fmt(M[key], { wait: body.retry_after });
    return M[key] || M.err_internal;
  }
  function showError(code, body, field) {
    var link = $('error-link');
    link.textContent = message(code, body || {});
    link.setAttribute('href', '#' + (field || FIELD[code] || 'main'));
    $('error-summary').hidden = false;
    $('error-summary').focus();
  }
  function clearError() { $('error-summary').hidden = true; }
  function post(path, body) {
    return fetch(path + qs, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (b) { return { status: r.status, body: b }; }, function () { return { status: r.status, body: {} }; });
    }, function () { return { status: 0, body: { error: 'service_unavailable' } }; });
  }
  function termsOk() {
    if (!C.terms_required) return true;
    if ($('accept_terms') && $('accept_terms').checked) return true;
    showError('terms_not_accepted', {}, 'accept_terms');
    return false;
  }
  function base() {
    var b = { mac: C.mac, hotspot_id: C.hotspot_id };
    if (C.gateway) b.gateway = C.gateway;
    return b;
  }
  // The session's end: the time, with the date when that is not today (a 24-hour session ends at
  // this very clock time tomorrow: "until 23:19" read at 23:19 looks like no time at all).
  function endTime(iso) {
    var d = new Date(iso), o = { hour: '2-digit', minute: '2-digit' };
    if (d.toDateString() !== new Date().toDateString()) { o.day = 'numeric'; o.month = 'long'; }
    return d.toLocaleString(C.lang === 'tr' ? 'tr-TR' : 'en-GB', o);
  }
  // A match-day voucher's start, in the hotspot's zone (where the guest stands), always with its date.
  function startTime(iso) {
    var o = { day: 'numeric', month: 'long', hour: '2-digit', minute: '2-digit', timeZone: C.tz };
    try { return new Date(iso).toLocaleString(C.lang === 'tr' ? 'tr-TR' : 'en-GB', o); } catch (e) { delete o.timeZone; return new Date(iso).toLocaleString(C.lang === 'tr' ? 'tr-TR' : 'en-GB', o); }
  }
  function success(b) {
    clearError();
    var until = b.expires_at ? endTime(b.expires_at) : '';
    $('success-body').textContent = until ? fmt(M.success_body, { until: until }) : M.success_body_plain;
    var forms = document.querySelectorAll('main > h1:not(#success-title), main > section, main > details, main > .check, #needs-js');
    for (var i = 0; i < forms.length; i++) forms[i].hidden = true;
    $('success').hidden = false;
    $('success-title').focus && $('success-title').setAttribute('tabindex', '-1');
    var h = b.handback;
    var next = /^https?:\/\//i.test(b.redirect_url || '') ? b.redirect_url : C.next;
    if (h) {
      var f = $('handback');
      f.setAttribute('method', h.method);
      f.setAttribute('action', h.url);
      for (var k in h.fields) {
        var inp = document.createElement('input');
        inp.type = 'hidden'; inp.name = k; inp.value = h.fields[k];
        f.insertBefore(inp, f.querySelector('button'));
      }
      f.hidden = false;
      $('continue-auto').hidden = false;
      setTimeout(function () { f.submit(); }, 1500);
    } else if (next) {
      $('continue').href = next;
      $('continue').hidden = false;
      $('continue-auto').hidden = false;
      setTimeout(function () { location.href = next; }, 1500);
    }
  }
  function answer(r, field) {
    if (r.status === 200 && r.body.status === 'authorized') return success(r.body);
    showError(r.body.error || 'internal', r.body, field);
  }

  var i, js = document.querySelectorAll('.js-only');
  for (i = 0; i < js.length; i++) js[i].hidden = false;
  if ($('needs-js')) $('needs-js').hidden = true;

  var vf = $('voucher-form');
  if (vf) vf.addEventListener('submit', function (e) {
    e.preventDefault();
    if (!termsOk()) return;
    var code = $('code').value.trim();
    if (!code) return showError('code_missing', {}, 'code');
    var b = base();
    b.code = code; b.ssid = C.ssid; b.lang = C.lang;
    if (C.ip) b.ip = C.ip;
    if (C.terms_required) b.accept_terms = true;
    post('/api/v1/hotspot-portal/voucher/verify', b).then(function (r) { answer(r, 'code'); });
  });

  // Room sign-in: the one terms box above is asked for; the room form's own copy is for posts without JavaScript.
  var rt = document.querySelectorAll('.no-js-terms');
  for (i = 0; i < rt.length; i++) rt[i].hidden = true;
  var rf = $('room-form');
  if (rf) rf.addEventListener('submit', function (e) {
    e.preventDefault();
    if (!termsOk()) return;
    var room = $('room-number').value.trim(), surname = $('surname').value.trim();
    if (!room || !surname) return showError('room_missing', {}, room ? 'surname' : 'room-number');
    var b = base();
    b.room = room; b.surname = surname; b.ssid = C.ssid; b.lang = C.lang;
    if (C.ip) b.ip = C.ip;
    if (C.terms_required) b.accept_terms = true;
    post('/api/v1/hotspot-portal/pms/verify', b).then(function (r) { answer(r, 'room-number'); });
  });

  // Phone and e-mail codes: request, then verify; the messaging-app channel's fate is polled from the server.
  function otp(kind, input, path) {
    var form = $(kind + '-form'), verify = $(kind + '-verify');
    if (!form) return;
    var to = '';
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      if (!termsOk()) return;
      to = $(input).value.trim();
      var b = base();
      b[input] = to; b.lang = C.lang;
      if (kind === 'phone') {
        b.ssid = C.ssid;
        var ch = form.querySelector('[name=channel]:checked') || form.querySelector('[name=channel]');
        if (ch) b.channel = ch.value;
      }
      post('/api/v1/hotspot-portal/' + path + '/request', b).then(function (r) {
        if (r.status !== 200) return showError(r.body.error || 'internal', r.body, input);
        clearError();
        verify.hidden = false;
        $(kind + '-code-hint').textContent = fmt(M['code_hint_' + kind], { to: to });
        $(kind + '-code').focus();
        if (kind === 'phone') watch(r.body.request_id, 0);
      });
    });
    verify.addEventListener('submit', function (e) {
      e.preventDefault();
      var code = $(kind + '-code').value.trim();
      if (!/^[0-9]{6}$/.test(code)) return showError('code_format', {}, kind + '-code');
      var b = base();
      b[input] = to; b.code = code;
      if (C.terms_required) b.accept_terms = true;
      post('/api/v1/hotspot-portal/' + path + '/verify', b).then(function (r) { answer(r, kind + '-code'); });
    });
  }
  function watch(id, n) {
    if (!id || n > 40) return;
    fetch('/api/v1/hotspot-portal/sms/status?request_id=' + encodeURIComponent(id), { headers: { accept: 'application/json' } })
      .then(function (r) { return r.json(); })
      .then(function (b) {
        var el = $('phone-status');
        // While on its way, say which channel carries it: the guest knows where to look.
        var text = M['status_' + b.status + '_' + b.channel] || M['status_' + b.status];
        if (text) el.textContent = text;
        if (b.status === 'sent') setTimeout(function () { watch(id, n + 1); }, 3000);
      }, function () { setTimeout(function () { watch(id, n + 1); }, 3000); });
  }
  otp('phone', 'phone', 'sms');
  otp('email', 'email', 'email');

  // Sponsor approval: the request, then the page waits for the host's answer (polled); the approval itself
  // is bound to the device, so the guest is let in even if this page is closed.
  function waiting() {
    var forms = document.querySelectorAll('main > h1:not(#success-title), main > section, main > details, main > .check, #needs-js');
    for (var i = 0; i < forms.length; i++) forms[i].hidden = true;
    $('sponsor-wait').hidden = false;
  }
  function poll(id) {
    fetch('/api/v1/hotspot-portal/sponsor/status?request_id=' + encodeURIComponent(id), { headers: { accept: 'application/json' } })
      .then(function (r) { return r.json().then(function (b) { return { status: r.status, body: b }; }); })
      .then(function (r) {
        if (r.status === 200 && r.body.status === 'authorized') { $('sponsor-wait').hidden = true; return success(r.body); }
        if (r.status === 200 && r.body.status === 'pending') return setTimeout(function () { poll(id); }, 2000);
        $('sponsor-wait').hidden = true;
        showError(r.status === 200 ? 'sponsor_' + r.body.status : (r.body.error || 'internal'), r.body, 'main');
      }, function () { setTimeout(function () { poll(id); }, 4000); });
  }
  var sf = $('sponsor-form');
  if (sf) sf.addEventListener('submit', function (e) {
    e.preventDefault();
    var own = $('sponsor_accept_terms');
    if (own && !own.checked && !($('accept_terms') && $('accept_terms').checked)) return showError('terms_not_accepted', {}, 'sponsor_accept_terms');
    var b = base();
    b.guest_name = $('guest_name').value.trim(); b.sponsor_email = $('sponsor_email').value.trim();
    b.ssid = C.ssid; b.lang = C.lang;
    if (C.ip) b.ip = C.ip;
    if (C.terms_required) b.accept_terms = true;
    post('/api/v1/hotspot-portal/sponsor/request', b).then(function (r) {
      if (r.status !== 200) return showError(r.body.error || 'internal', r.body, r.body.error === 'email_invalid' ? 'sponsor_email' : null);
      clearError();
      waiting();
      poll(r.body.request_id);
    });
  });
})();
