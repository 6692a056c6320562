// placeholder
document.body.dataset.ready = '1';
