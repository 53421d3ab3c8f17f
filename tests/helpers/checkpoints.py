"""Crafted checkpoint files: what a malicious or broken download could hold."""
import io
import os
import pathlib
import pickle
import struct
import tarfile
import zipfile
import zlib
from typing import Callable, Optional

import torch


class CreatesFile:
    """Unpickling this creates ``path``: what a malicious checkpoint could do."""

    def __init__(self, path):
        self.path = pathlib.Path(path)

    def __reduce__(self):
        return pathlib.Path.touch, (self.path, )


def crafted_checkpoint(path, created, zip_format: bool = True) -> pathlib.Path:
    """A checkpoint at ``path`` whose full unpickling would create ``created``."""
    torch.save(
        dict(state_dict={'w': torch.ones(2)}, payload=CreatesFile(created)),
        path,
        _use_new_zipfile_serialization=zip_format)
    return pathlib.Path(path)


def rewrite_zip(src, dst, edit: Callable[[str, bytes], bytes] = lambda name, data: data) -> None:
    """Copy torch's zip ``src`` to ``dst`` with each record's bytes passed through ``edit``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, 'w') as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, edit(info.filename, zin.read(info)))


def edit_pickle(src, dst, edit: Callable[[bytes], bytes]) -> None:
    """Copy the checkpoint ``src`` (zip or legacy format) to ``dst`` with its
    object pickle's bytes passed through ``edit``."""
    with open(src, 'rb') as file:
        is_zip = file.read(4) == b'PK\x03\x04'
    if is_zip:
        rewrite_zip(src, dst, lambda name, data: edit(data) if name.endswith('data.pkl') else data)
    else:
        pathlib.Path(dst).write_bytes(edit(pathlib.Path(src).read_bytes()))


def deflate_bomb(path, megabytes: int) -> None:
    """A torch zip checkpoint of one float32 tensor of ``megabytes`` MiB of zeros,
    its data record deflated (about 1/1000 of that on disk); written in 1 MiB
    chunks, so making it needs no such memory."""
    numel = megabytes * (1 << 20) // 4
    template = io.BytesIO()
    torch.save({'w': torch.zeros(7)}, template)
    with zipfile.ZipFile(template) as zin, zipfile.ZipFile(path, 'w') as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith('data.pkl'):  # numel 7 (BININT1) -> numel (BININT)
                data = data.replace(b'K\x07', b'J' + numel.to_bytes(4, 'little'))
                zout.writestr(info.filename, data)
            elif info.filename.endswith('/data/0'):
                member = zipfile.ZipInfo(info.filename, date_time=(2026, 1, 1, 0, 0, 0))
                member.compress_type = zipfile.ZIP_DEFLATED
                with zout.open(member, 'w', force_zip64=True) as out:
                    chunk = bytes(1 << 20)
                    for _ in range(megabytes):
                        out.write(chunk)
            else:
                zout.writestr(info.filename, data)


def legacy_storage_bomb(path, numel: int) -> None:
    """A legacy-format checkpoint (a few hundred bytes) whose one float32
    storage declares ``numel`` elements."""
    buffer = io.BytesIO()
    torch.save({'w': torch.zeros(10)}, buffer, _use_new_zipfile_serialization=False)
    data = buffer.getvalue()
    marker = b'cpuq\x06K\nN'  # location 'cpu', numel 10 (BININT1), no view
    assert data.count(marker) == 1
    pathlib.Path(path).write_bytes(
        data.replace(marker, b'cpuq\x06\x8a\x08' + numel.to_bytes(8, 'little') + b'N'))


def legacy_tar(path, link_to: Optional[str] = None, fifo: bool = False) -> None:
    """A checkpoint in torch's pre-0.4 tar layout whose ``storages`` member is a
    hard link to ``link_to`` (mode 4777, old mtime: what extraction would
    apply to that file), or a FIFO."""
    with tarfile.open(path, 'w', format=tarfile.PAX_FORMAT) as tar:
        member = tarfile.TarInfo('storages')
        if fifo:
            member.type = tarfile.FIFOTYPE
        else:
            member.type, member.linkname = tarfile.LNKTYPE, str(link_to)
        member.mode, member.mtime = 0o4777, 12345
        tar.addfile(member)
        for name in ('pickle', 'tensors', 'sys_info'):
            data = pickle.dumps({})
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def file_state(path) -> tuple:
    """Mode, owner and modification time of ``path``."""
    stat = os.stat(path)
    return stat.st_mode, stat.st_uid, stat.st_gid, stat.st_mtime_ns


# Hand-assembled protocol-2 pickles: what no pickler writes but a file can hold.
def op_global(module: str, name: str) -> bytes:
    return b'c' + f'{module}\n{name}\n'.encode()


def op_text(text: str) -> bytes:
    data = text.encode()
    return b'X' + len(data).to_bytes(4, 'little') + data


def op_int(value: int) -> bytes:
    return b'J' + value.to_bytes(4, 'little', signed=True)


def op_put(slot: int) -> bytes:
    return b'q' + bytes([slot])


def op_get(slot: int) -> bytes:
    return b'h' + bytes([slot])


def op_bytes(data: bytes) -> bytes:
    """``bytes`` as protocol 2 writes them: ``_codecs.encode(text, 'latin1')``."""
    return (op_global('_codecs', 'encode') + b'(' + op_text(data.decode('latin1')) +
            op_text('latin1') + b'tR')


def zip_checkpoint(body: bytes) -> bytes:
    """A torch zip checkpoint whose object pickle is protocol 2 + ``body`` + STOP."""
    template, out = io.BytesIO(), io.BytesIO()
    torch.save({}, template)
    with zipfile.ZipFile(template) as zin, zipfile.ZipFile(out, 'w') as zout:
        for info in zin.infolist():
            data = b'\x80\x02' + body + b'.' if info.filename.endswith('data.pkl') else zin.read(
                info)
            zout.writestr(info.filename, data)
    return out.getvalue()


def doubled_zip64(data_size: int, declared: int) -> bytes:
    """A torch zip checkpoint of one uint8 tensor of ``data_size`` whose data
    record's central entry carries two zip64 size fields: ``declared`` first
    (what torch's reader takes), the true size second (what Python's takes)."""
    buffer = io.BytesIO()
    torch.save({'a': torch.zeros(data_size, dtype=torch.uint8)}, buffer)
    with zipfile.ZipFile(buffer) as archive:
        records = [(info.filename, archive.read(info)) for info in archive.infolist()]
    out, directory = bytearray(), bytearray()
    for name, data in records:
        encoded, crc, offset = name.encode(), zlib.crc32(data), len(out)
        out += struct.pack('<IHHHHHIIIHH', 0x04034b50, 20, 0, 0, 0, 0, crc, len(data), len(data),
                           len(encoded), 0) + encoded + data
        extra, size = b'', len(data)
        if name.endswith('/data/0'):
            extra = struct.pack('<HHQ', 1, 8, declared) + struct.pack('<HHQ', 1, 8, len(data))
            size = 0xFFFFFFFF
        directory += struct.pack('<IHHHHHHIIIHHHHHII',
                                 0x02014b50, 45, 45, 0, 0, 0, 0, crc, len(data), size, len(encoded),
                                 len(extra), 0, 0, 0, 0, offset) + encoded + extra
    start = len(out)
    out += directory + struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, len(records), len(records),
                                   len(directory), start, 0)
    return bytes(out)


def _local_header(name: bytes, method: int, crc: int, stored: int, size: int) -> bytes:
    return struct.pack('<IHHHHHIIIHH', 0x04034b50, 20, 0, method, 0, 0, crc, stored, size,
                       len(name), 0) + name


def two_directories(megabytes: int) -> bytes:
    """A torch zip checkpoint of one float32 tensor of ``megabytes`` MiB of
    zeros (deflated) with two central directories of equal size: the end
    record's offset names the one torch's reader takes (the data record
    deflated to ``megabytes`` MiB), and Python's ``zipfile``, which locates
    the directory just before the end record and shifts every offset by the
    difference, reads the other (the data record stored, as small as on
    disk). A dummy record of the directory's size opens the file."""
    numel = megabytes * (1 << 20) // 4
    template = io.BytesIO()
    torch.save({'w': torch.zeros(7)}, template)
    with zipfile.ZipFile(template) as archive:
        records = [(info.filename, archive.read(info)) for info in archive.infolist()]
    body, entries = bytearray(), []
    for name, data in records:
        method, size = 0, len(data)
        if name.endswith('data.pkl'):  # numel 7 (BININT1) -> numel (BININT)
            data = data.replace(b'K\x07', b'J' + numel.to_bytes(4, 'little'))
            size = len(data)
        crc = zlib.crc32(data)
        if name.endswith('/data/0'):
            raw = bytes(numel * 4)
            deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
            crc, data, method, size = zlib.crc32(
                raw), deflate.compress(raw) + deflate.flush(), 8, len(raw)
        entries.append((name.encode(), crc, method, len(data), size, len(body)))
        body += _local_header(name.encode(), method, crc, len(data), size) + data

    def directory(as_torch_reads: bool, shift: int) -> bytes:
        out = bytearray()
        for name, crc, method, stored, size, offset in entries:
            method, size = (method, size) if as_torch_reads else (0, stored)
            out += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 20, 20, 0, method, 0, 0, crc,
                               stored, size, len(name), 0, 0, 0, 0, 0, offset + shift) + name
        return bytes(out)

    cd_size = len(directory(True, 0))
    pad = b'archive/pad'
    prefix = _local_header(pad, 0, 0, cd_size - 30 - len(pad), cd_size - 30 - len(pad))
    out = bytearray(prefix.ljust(cd_size, b'\0')) + body
    torch_directory = len(out)
    out += directory(True, cd_size) + directory(False, 0)
    out += struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, len(entries), len(entries), cd_size,
                       torch_directory, 0)
    return bytes(out)


def rename_records(src, dst, rename: Callable[[str], str]) -> None:
    """Copy torch's zip ``src`` to ``dst`` with each record renamed by ``rename``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, 'w') as zout:
        for info in zin.infolist():
            zout.writestr(rename(info.filename), zin.read(info))
