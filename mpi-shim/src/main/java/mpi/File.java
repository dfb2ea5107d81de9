package mpi;

import java.io.IOException;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Set;

/**
 * MPI-IO basics ({@code MPI_File}) on a local file system: each process opens the file itself (a file on a shared
 * file system is shared as that file system shares it) and reads, writes and seeks with its own file pointer, in
 * etypes of the view ({@link MPI#BYTE} until {@link #setView} says otherwise). Supported: open and close, {@link
 * #delete}, size, the explicit-offset and individual-pointer reads and writes (the {@code …All} forms do the same:
 * collective I/O gives the same result as independent I/O), their nonblocking forms ({@code iRead}, {@code iReadAt},
 * {@code iWriteAll} …) and split collectives ({@code readAtAllBegin}/{@code End} …), {@link #seek}, {@link
 * #getPosition}, a view whose file type is its etype. A nonblocking or split call does its I/O when called (MPI lets it
 * complete at any time before its wait or end): its request is complete at once. Anything else (shared and ordered
 * file pointers, other views, atomicity) raises {@link MPIException} of class {@link MPI#ERR_UNSUPPORTED_OPERATION}
 * saying it is not supported.
 */
public final class File {
    private final Comm comm;
    private final String filename;
    private final int amode;
    private FileChannel ch;
    private long position; // in etypes, relative to the view's displacement
    private FileView view = new FileView(0, MPI.BYTE, MPI.BYTE, "native");
    private Info info;
    private Errhandler errhandler = MPI.ERRORS_RETURN;
    private Status split; // the status of a split collective begun and not yet ended

    /** {@code MPI_File_open} with [amode] of {@link MPI#MODE_RDONLY} … ; every process of [comm] calls it. */
    public File(Comm comm, String filename, int amode) throws MPIException {
        this(comm, filename, amode, MPI.INFO_NULL);
    }

    public File(Comm comm, String filename, int amode, Info info) throws MPIException {
        MPI.check();
        comm.braid();
        this.comm = comm;
        this.filename = filename;
        this.amode = amode;
        this.info = info;
        int access = amode & (MPI.MODE_RDONLY | MPI.MODE_WRONLY | MPI.MODE_RDWR);
        if (access != MPI.MODE_RDONLY && access != MPI.MODE_WRONLY && access != MPI.MODE_RDWR)
            throw fail(MPI.ERR_AMODE, "MPI_File_open: amode " + amode
                    + " must hold exactly one of MODE_RDONLY, MODE_WRONLY and MODE_RDWR");
        if (access == MPI.MODE_RDONLY && (amode & (MPI.MODE_CREATE | MPI.MODE_EXCL)) != 0)
            throw fail(MPI.ERR_AMODE, "MPI_File_open: MODE_RDONLY cannot go with MODE_CREATE or MODE_EXCL");
        if (access == MPI.MODE_RDWR && (amode & MPI.MODE_SEQUENTIAL) != 0)
            throw fail(MPI.ERR_AMODE, "MPI_File_open: MODE_SEQUENTIAL cannot go with MODE_RDWR");
        Set<OpenOption> opts = new HashSet<>();
        if (access != MPI.MODE_WRONLY) opts.add(StandardOpenOption.READ);
        if (access != MPI.MODE_RDONLY) opts.add(StandardOpenOption.WRITE);
        if ((amode & MPI.MODE_CREATE) != 0) opts.add(StandardOpenOption.CREATE);
        try {
            Path path = Paths.get(filename);
            if ((amode & MPI.MODE_EXCL) != 0 && Files.exists(path))
                throw fail(MPI.ERR_FILE_EXISTS, "MPI_File_open: " + filename + " exists and MODE_EXCL was given");
            ch = FileChannel.open(path, opts);
            if ((amode & MPI.MODE_APPEND) != 0) position = ch.size();
        } catch (IOException e) {
            throw io("MPI_File_open", e);
        }
    }

    private MPIException fail(int clazz, String message) throws MPIException {
        MPIException e = Err.of(clazz, message);
        if (errhandler == MPI.ERRORS_ARE_FATAL) MPI.mpi().abort(clazz, "fatal error on file " + filename + ": "
                + e.getMessage());
        return e;
    }

    private MPIException io(String call, IOException e) throws MPIException {
        int clazz = e instanceof NoSuchFileException ? MPI.ERR_NO_SUCH_FILE
                : e instanceof FileAlreadyExistsException ? MPI.ERR_FILE_EXISTS
                : e instanceof AccessDeniedException ? MPI.ERR_ACCESS
                : MPI.ERR_IO;
        MPIException m = fail(clazz, call + ": " + filename + ": " + e);
        m.initCause(e);
        return m;
    }

    private MPIException unsupported(String call) throws MPIException {
        return fail(MPI.ERR_UNSUPPORTED_OPERATION, "File." + call + " is not supported by Braid's mpi package "
                + "(shared and ordered file pointers, views other than their etype and atomic mode are not; reads, "
                + "writes and seeks with explicit offsets and individual pointers, blocking, nonblocking and "
                + "split-collective, are)");
    }

    private FileChannel open(String call) throws MPIException {
        MPI.check();
        if (ch == null) throw fail(MPI.ERR_FILE, call + ": the file has been closed");
        return ch;
    }

    public void close() throws MPIException {
        FileChannel c = open("MPI_File_close");
        try {
            c.close();
            if ((amode & MPI.MODE_DELETE_ON_CLOSE) != 0) Files.deleteIfExists(Paths.get(filename));
        } catch (IOException e) {
            throw io("MPI_File_close", e);
        } finally {
            ch = null;
        }
    }

    public static void delete(String filename) throws MPIException {
        MPI.check();
        try {
            Files.delete(Paths.get(filename));
        } catch (NoSuchFileException e) {
            throw Err.of(MPI.ERR_NO_SUCH_FILE, "MPI_File_delete: " + filename + " does not exist");
        } catch (IOException e) {
            throw Err.of(MPI.ERR_IO, "MPI_File_delete: " + filename + ": " + e);
        }
    }

    public static void delete(String filename, Info info) throws MPIException {
        delete(filename);
    }

    public void setSize(long size) throws MPIException {
        FileChannel c = open("MPI_File_set_size");
        try {
            if (size < c.size()) c.truncate(size);
            else if (size > c.size()) c.write(ByteBuffer.allocate(1), size - 1);
        } catch (IOException e) {
            throw io("MPI_File_set_size", e);
        }
    }

    public void preallocate(long size) throws MPIException {
        FileChannel c = open("MPI_File_preallocate");
        try {
            if (size > c.size()) c.write(ByteBuffer.allocate(1), size - 1);
        } catch (IOException e) {
            throw io("MPI_File_preallocate", e);
        }
    }

    public long getSize() throws MPIException {
        FileChannel c = open("MPI_File_get_size");
        try {
            return c.size();
        } catch (IOException e) {
            throw io("MPI_File_get_size", e);
        }
    }

    public Group getGroup() throws MPIException {
        open("MPI_File_get_group");
        return comm.getGroup();
    }

    public int getAMode() throws MPIException {
        open("MPI_File_get_amode");
        return amode;
    }

    public void setInfo(Info info) throws MPIException {
        open("MPI_File_set_info");
        this.info = info;
    }

    public Info getInfo() throws MPIException {
        open("MPI_File_get_info");
        return info == null || info.isNull() ? new Info() : info.dup();
    }

    /** {@code MPI_File_set_view}: supported where [filetype] is [etype] and [datarep] is "native". */
    public void setView(long disp, Datatype etype, Datatype filetype, String datarep) throws MPIException {
        open("MPI_File_set_view");
        if (etype.braid() != filetype.braid() || !"native".equals(datarep))
            throw unsupported("setView with a file type other than its etype or a data representation other than "
                    + "\"native\"");
        view = new FileView(disp, etype, filetype, datarep);
        position = 0;
    }

    public void setView(long disp, Datatype etype, Datatype filetype, String datarep, Info info)
            throws MPIException {
        setView(disp, etype, filetype, datarep);
    }

    public FileView getView() {
        return view;
    }

    // ## Data access ##

    private long etypeSize() throws MPIException {
        return view.getEType().braid().getSize();
    }

    private long byteOffset(long offset) throws MPIException {
        return view.getDisp() + offset * etypeSize();
    }

    /** Reads [count] × [type] at byte [at] into [buf]; returns the bytes read. */
    private long readBytes(String call, long at, Object buf, int count, Datatype type) throws MPIException {
        FileChannel c = open(call);
        braid.mpi.Datatype t = type.braid();
        int bytes = (int) (count * t.getSize());
        ByteBuffer packed = ByteBuffer.allocate(bytes);
        try {
            while (packed.hasRemaining()) {
                int n = c.read(packed, at + packed.position());
                if (n < 0) break;
            }
        } catch (IOException e) {
            throw io(call, e);
        }
        int got = packed.position();
        int whole = t.getSize() == 0 ? 0 : (int) (got / t.getSize());
        Buf.Staged s = Buf.stage(buf, type.spanBytes(count), true, 1);
        try {
            t.unpack(packed, 0, s.bytes, 0, whole);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            s.done();
        }
        return got;
    }

    private long writeBytes(String call, long at, Object buf, int count, Datatype type) throws MPIException {
        FileChannel c = open(call);
        if ((amode & MPI.MODE_RDONLY) != 0) throw fail(MPI.ERR_READ_ONLY, call + ": " + filename + " is open read-only");
        braid.mpi.Datatype t = type.braid();
        ByteBuffer packed = ByteBuffer.allocate((int) (count * t.getSize()));
        Buf.Staged s = Buf.stage(buf, type.spanBytes(count), false, 0);
        try {
            t.pack(s.bytes, 0, count, packed, 0);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            s.done();
        }
        try {
            while (packed.hasRemaining()) c.write(packed, at + packed.position());
        } catch (IOException e) {
            throw io(call, e);
        }
        return packed.capacity();
    }

    public Status readAt(long offset, Object buf, int count, Datatype type) throws MPIException {
        return Status.ofBytes(readBytes("MPI_File_read_at", byteOffset(offset), buf, count, type));
    }

    public Status readAtAll(long offset, Object buf, int count, Datatype type) throws MPIException {
        return Status.ofBytes(readBytes("MPI_File_read_at_all", byteOffset(offset), buf, count, type));
    }

    public Status writeAt(long offset, Object buf, int count, Datatype type) throws MPIException {
        return Status.ofBytes(writeBytes("MPI_File_write_at", byteOffset(offset), buf, count, type));
    }

    public Status writeAtAll(long offset, Object buf, int count, Datatype type) throws MPIException {
        return Status.ofBytes(writeBytes("MPI_File_write_at_all", byteOffset(offset), buf, count, type));
    }

    public Request iReadAt(long offset, Buffer buf, int count, Datatype type) throws MPIException {
        Buf.assertDirect(buf);
        return completed(readBytes("MPI_File_iread_at", byteOffset(offset), buf, count, type), buf);
    }

    public Request iReadAtAll(long offset, Buffer buf, int count, Datatype type) throws MPIException {
        Buf.assertDirect(buf);
        return completed(readBytes("MPI_File_iread_at_all", byteOffset(offset), buf, count, type), buf);
    }

    public Request iWriteAt(long offset, Buffer buf, int count, Datatype type) throws MPIException {
        Buf.assertDirect(buf);
        return completed(writeBytes("MPI_File_iwrite_at", byteOffset(offset), buf, count, type), buf);
    }

    public Request iWriteAtAll(long offset, Buffer buf, int count, Datatype type) throws MPIException {
        Buf.assertDirect(buf);
        return completed(writeBytes("MPI_File_iwrite_at_all", byteOffset(offset), buf, count, type), buf);
    }

    /**
     * A nonblocking call's request: the I/O was done by the call (MPI lets an operation complete at any time before its
     * wait), so the request is complete at once, its status carrying the bytes moved.
     */
    private static Request completed(long bytes, Buffer buf) throws MPIException {
        try {
            braid.mpi.GeneralizedRequest g = MPI.mpi().startGeneralizedRequest();
            g.complete(bytes);
            return Request.of(g, null, buf);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** A split collective's begin: done by the begin call (see {@link #completed}); its end returns the status. */
    private void begin(String call) throws MPIException {
        open(call);
        if (split != null)
            throw fail(MPI.ERR_OTHER, call + ": a split collective on " + filename + " has begun and not ended (one at "
                    + "a time per file)");
    }

    private Status end(String call) throws MPIException {
        open(call);
        Status s = split;
        if (s == null) throw fail(MPI.ERR_OTHER, call + ": no split collective on " + filename + " has begun");
        split = null;
        return s;
    }

    private Status readHere(String call, Object buf, int count, Datatype type) throws MPIException {
        long got = readBytes(call, byteOffset(position), buf, count, type);
        position += got / etypeSize();
        return Status.ofBytes(got);
    }

    private Status writeHere(String call, Object buf, int count, Datatype type) throws MPIException {
        long put = writeBytes(call, byteOffset(position), buf, count, type);
        position += put / etypeSize();
        return Status.ofBytes(put);
    }

    public Status read(Object buf, int count, Datatype type) throws MPIException {
        return readHere("MPI_File_read", buf, count, type);
    }

    public Status readAll(Object buf, int count, Datatype type) throws MPIException {
        return readHere("MPI_File_read_all", buf, count, type);
    }

    public Status write(Object buf, int count, Datatype type) throws MPIException {
        return writeHere("MPI_File_write", buf, count, type);
    }

    public Status writeAll(Object buf, int count, Datatype type) throws MPIException {
        return writeHere("MPI_File_write_all", buf, count, type);
    }

    public Request iRead(Buffer buf, int count, Datatype type) throws MPIException {
        Buf.assertDirect(buf);
        return completed(readHere("MPI_File_iread", buf, count, type).bytes(), buf);
    }

    public Request iReadAll(Buffer buf, int count, Datatype type) throws MPIException {
        Buf.assertDirect(buf);
        return completed(readHere("MPI_File_iread_all", buf, count, type).bytes(), buf);
    }

    public Request iWrite(Buffer buf, int count, Datatype type) throws MPIException {
        Buf.assertDirect(buf);
        return completed(writeHere("MPI_File_iwrite", buf, count, type).bytes(), buf);
    }

    public Request iWriteAll(Buffer buf, int count, Datatype type) throws MPIException {
        Buf.assertDirect(buf);
        return completed(writeHere("MPI_File_iwrite_all", buf, count, type).bytes(), buf);
    }

    /** {@code MPI_File_seek}: moves this process's pointer, in etypes, from {@link MPI#SEEK_SET}, _CUR or _END. */
    public void seek(long offset, int whence) throws MPIException {
        FileChannel c = open("MPI_File_seek");
        long to;
        if (whence == MPI.SEEK_SET) to = offset;
        else if (whence == MPI.SEEK_CUR) to = position + offset;
        else if (whence == MPI.SEEK_END) {
            try {
                to = (c.size() - view.getDisp()) / etypeSize() + offset;
            } catch (IOException e) {
                throw io("MPI_File_seek", e);
            }
        } else throw fail(MPI.ERR_ARG, "MPI_File_seek: whence " + whence + " is not SEEK_SET, SEEK_CUR or SEEK_END");
        if (to < 0) throw fail(MPI.ERR_ARG, "MPI_File_seek: the position would be " + to + ", before the view's start");
        position = to;
    }

    public long getPosition() throws MPIException {
        open("MPI_File_get_position");
        return position;
    }

    public long getByteOffset(long offset) throws MPIException {
        open("MPI_File_get_byte_offset");
        return byteOffset(offset);
    }

    public Status readShared(Object buf, int count, Datatype type) throws MPIException {
        throw unsupported("readShared");
    }

    public Status writeShared(Object buf, int count, Datatype type) throws MPIException {
        throw unsupported("writeShared");
    }

    public Request iReadShared(Buffer buf, int count, Datatype type) throws MPIException {
        throw unsupported("iReadShared");
    }

    public Request iWriteShared(Buffer buf, int count, Datatype type) throws MPIException {
        throw unsupported("iWriteShared");
    }

    public Status readOrdered(Object buf, int count, Datatype type) throws MPIException {
        throw unsupported("readOrdered");
    }

    public Status writeOrdered(Object buf, int count, Datatype type) throws MPIException {
        throw unsupported("writeOrdered");
    }

    public void seekShared(long offset, int whence) throws MPIException {
        throw unsupported("seekShared");
    }

    public long getPositionShared() throws MPIException {
        throw unsupported("getPositionShared");
    }

    public void readAtAllBegin(long offset, Object buf, int count, Datatype type) throws MPIException {
        begin("MPI_File_read_at_all_begin");
        split = Status.ofBytes(readBytes("MPI_File_read_at_all_begin", byteOffset(offset), buf, count, type));
    }

    public Status readAtAllEnd(Object buf) throws MPIException {
        return end("MPI_File_read_at_all_end");
    }

    public void writeAtAllBegin(long offset, Object buf, int count, Datatype type) throws MPIException {
        begin("MPI_File_write_at_all_begin");
        split = Status.ofBytes(writeBytes("MPI_File_write_at_all_begin", byteOffset(offset), buf, count, type));
    }

    public Status writeAtAllEnd(Object buf) throws MPIException {
        return end("MPI_File_write_at_all_end");
    }

    public void readAllBegin(Object buf, int count, Datatype type) throws MPIException {
        begin("MPI_File_read_all_begin");
        split = readHere("MPI_File_read_all_begin", buf, count, type);
    }

    public Status readAllEnd(Object buf) throws MPIException {
        return end("MPI_File_read_all_end");
    }

    public void writeAllBegin(Object buf, int count, Datatype type) throws MPIException {
        begin("MPI_File_write_all_begin");
        split = writeHere("MPI_File_write_all_begin", buf, count, type);
    }

    public Status writeAllEnd(Object buf) throws MPIException {
        return end("MPI_File_write_all_end");
    }

    public void readOrderedBegin(Object buf, int count, Datatype type) throws MPIException {
        throw unsupported("readOrderedBegin");
    }

    public Status readOrderedEnd(Object buf) throws MPIException {
        throw unsupported("readOrderedEnd");
    }

    public void writeOrderedBegin(Object buf, int count, Datatype type) throws MPIException {
        throw unsupported("writeOrderedBegin");
    }

    public Status writeOrderedEnd(Object buf) throws MPIException {
        throw unsupported("writeOrderedEnd");
    }

    /** The extent of [type] in the file (its extent in memory, "native" representation), in bytes. */
    public int getTypeExtent(Datatype type) throws MPIException {
        open("MPI_File_get_type_extent");
        return (int) type.braid().getExtent();
    }

    public void setAtomicity(boolean atomicity) throws MPIException {
        throw unsupported("setAtomicity");
    }

    public boolean getAtomicity() throws MPIException {
        open("MPI_File_get_atomicity");
        return false;
    }

    /** {@code MPI_File_sync}: forces what was written to the storage device. */
    public void sync() throws MPIException {
        FileChannel c = open("MPI_File_sync");
        try {
            c.force(true);
        } catch (IOException e) {
            throw io("MPI_File_sync", e);
        }
    }

    public void setErrhandler(Errhandler errhandler) throws MPIException {
        MPI.check();
        this.errhandler = errhandler;
    }

    public Errhandler getErrhandler() throws MPIException {
        MPI.check();
        return errhandler;
    }

    public void callErrhandler(int errorCode) throws MPIException {
        throw fail(errorCode, "MPI_File_call_errhandler on " + filename + ": error " + errorCode);
    }
}
