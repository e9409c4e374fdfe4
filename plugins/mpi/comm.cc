// comm.cc: staging memory, and the post-then-poll Exchange every collective is made of.
#include "comm.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "plugin_support.hpp"
#include "runtime.hpp"

namespace dlrt::mpi {
namespace {

using Clock = std::chrono::steady_clock;
using dlrt::plugin::fail;

// MPI counts are int: a buffer larger than this travels as several messages of at most this
// many bytes, all with the same tag (MPI keeps messages of one (source, tag, communicator) in
// order, so they match their receives one to one).
constexpr size_t kMaxMessage = size_t{1} << 30;

// How long a failed exchange tries to retire a cancelled request before releasing it.
constexpr auto kRetireWait = std::chrono::milliseconds(100);

}  // namespace

// ---- Staging ----------------------------------------------------------------------------

Staging::~Staging() {
  if (!abandoned_) return;
  for (auto& s : slots_) (void)s.data.release();  // MPI may still write here: leak on purpose
}

unsigned char* Staging::get(size_t slot, size_t bytes) {
  if (slots_.size() <= slot) slots_.resize(slot + 1);
  Slot& s = slots_[slot];
  if (s.bytes < bytes || s.data == nullptr) {
    s.data.reset(new unsigned char[bytes == 0 ? 1 : bytes]);  // not zeroed: always overwritten
    s.bytes = bytes;
  }
  return s.data.get();
}

// ---- communicator state -----------------------------------------------------------------

void check_usable(const dlrt_comm* comm, const std::string& op) {
  dlrt::plugin::require(comm, "comm");
  if (comm->error_code != DLRT_OK)
    fail(DLRT_FAILED_PRECONDITION, "mpi " + op +
                                       ": the communicator is broken by an earlier error "
                                       "(abort it): " +
                                       comm->error_message);
}

// ---- Exchange ---------------------------------------------------------------------------

Exchange::Exchange(dlrt_comm* comm, std::string op)
    : Exchange(comm, std::move(op), Deadline(comm->timeout_ms)) {}

Exchange::Exchange(dlrt_comm* comm, std::string op, const Deadline& deadline)
    : comm_(comm),
      op_(std::move(op)),
      deadline_(deadline),
      tag_(static_cast<int>(comm->calls % (static_cast<uint64_t>(comm->tag_ub) + 1))) {
  ++comm->calls;
}

Exchange::~Exchange() {
  // Only reached with open requests when posting threw (wait() retires on its own failures).
  bool open = std::any_of(requests_.begin(), requests_.end(),
                          [](MPI_Request r) { return r != MPI_REQUEST_NULL; });
  if (!open) return;
  if (comm_->error_code == DLRT_OK) {
    comm_->error_code = DLRT_INTERNAL;
    comm_->error_message = "mpi " + op_ + ": interrupted while messages were in flight";
    note_failure();
  }
  retire_open_requests();
}

void Exchange::send(int peer, const unsigned char* data, size_t bytes) {
  post(peer, false, const_cast<unsigned char*>(data), bytes);  // MPI_Isend takes const void*
}

void Exchange::recv(int peer, unsigned char* data, size_t bytes) { post(peer, true, data, bytes); }

void Exchange::post(int peer, bool is_recv, unsigned char* data, size_t bytes) {
  // Room first: once MPI has a request, recording it must not fail (and leak it).
  const size_t messages = bytes == 0 ? 1 : (bytes + kMaxMessage - 1) / kMaxMessage;
  requests_.reserve(requests_.size() + messages);
  pending_.reserve(pending_.size() + messages);
  size_t offset = 0;
  do {  // at least one message, so a zero-byte transfer still synchronises
    size_t n = std::min(bytes - offset, kMaxMessage);
    MPI_Request request = MPI_REQUEST_NULL;
    int rc;
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      rc = is_recv ? MPI_Irecv(data + offset, static_cast<int>(n), MPI_BYTE, peer, tag_, comm_->mpi,
                               &request)
                   : MPI_Isend(data + offset, static_cast<int>(n), MPI_BYTE, peer, tag_, comm_->mpi,
                               &request);
    }
    if (rc != MPI_SUCCESS)
      fail_comm(DLRT_UNAVAILABLE,
                "rank " + std::to_string(peer) + " of " + std::to_string(comm_->nranks) + ": " +
                    (is_recv ? "MPI_Irecv" : "MPI_Isend") + " failed: " + error_string(rc));
    requests_.push_back(request);
    pending_.push_back({peer, is_recv, static_cast<int>(n)});
    offset += n;
  } while (offset < bytes);
}

std::set<int> Exchange::open_peers() const {
  std::set<int> peers;
  for (size_t i = 0; i < requests_.size(); ++i)
    if (requests_[i] != MPI_REQUEST_NULL) peers.insert(pending_[i].peer);
  return peers;
}

std::string Exchange::peers_text(const std::set<int>& peers) const {
  std::string list;
  for (int p : peers) list += (list.empty() ? "" : ", ") + std::to_string(p);
  return (peers.size() == 1 ? "rank " : "ranks ") + list + " of " + std::to_string(comm_->nranks);
}

void Exchange::wait() {
  const int n = static_cast<int>(requests_.size());
  std::vector<int> done(requests_.size());
  std::vector<MPI_Status> statuses(requests_.size());
  for (;;) {
    int outcount = 0;
    int rc;
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      rc = MPI_Testsome(n, requests_.data(), &outcount, done.data(), statuses.data());
    }
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
      fail_comm(DLRT_UNAVAILABLE, "MPI_Testsome failed while waiting for " +
                                      peers_text(open_peers()) + ": " + error_string(rc));
    if (outcount == MPI_UNDEFINED) return;  // no request left open: all complete
    for (int k = 0; k < outcount; ++k) {
      const Pending& p = pending_[static_cast<size_t>(done[k])];
      const MPI_Status& st = statuses[static_cast<size_t>(k)];
      const std::string who =
          "rank " + std::to_string(p.peer) + " of " + std::to_string(comm_->nranks);
      int error = rc == MPI_ERR_IN_STATUS ? st.MPI_ERROR : MPI_SUCCESS;
      if (error != MPI_SUCCESS && error != MPI_ERR_PENDING) {
        int error_class = error;
        MPI_Error_class(error, &error_class);
        if (error_class == MPI_ERR_TRUNCATE)
          fail_comm(DLRT_INVALID_ARGUMENT,
                    who + " sent more than the " + std::to_string(p.expected_bytes) +
                        " bytes expected: every rank must make the same calls with the same "
                        "count and dtype");
        fail_comm(DLRT_UNAVAILABLE, who + " failed: " + error_string(error));
      }
      if (p.is_recv) {
        int got = -1;
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got != p.expected_bytes)
          fail_comm(DLRT_INVALID_ARGUMENT,
                    who + " sent " + std::to_string(got) + " bytes where " +
                        std::to_string(p.expected_bytes) +
                        " were expected: every rank must make the same calls with the same "
                        "count and dtype");
      }
    }
    if (deadline_.passed()) {
      const std::set<int> late = open_peers();
      fail_comm(DLRT_DEADLINE_EXCEEDED, peers_text(late) + " did not answer within " +
                                            deadline_.text() + " (DLRT_COLLECTIVE_TIMEOUT); " +
                                            (late.size() == 1 ? "it" : "they") + " may have died");
    }
    deadline_.pause();
  }
}

void Exchange::fail_comm(dlrt_code code, const std::string& what) {
  std::string message =
      "mpi " + op_ + ": " + what + " (this process is rank " + std::to_string(comm_->rank) + ")";
  if (comm_->error_code == DLRT_OK) {
    comm_->error_code = code;
    comm_->error_message = message;
  }
  note_failure();
  retire_open_requests();
  fail(code, message);
}

// Never waits for a peer: cancel what is open, give the cancellations a moment to complete
// (a cancelled receive completes locally), then release whatever is still open. Released
// requests may still read or write the staging buffers, which are therefore never freed.
void Exchange::retire_open_requests() noexcept {
  {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    for (MPI_Request& r : requests_)
      if (r != MPI_REQUEST_NULL) MPI_Cancel(&r);
  }
  const auto give_up = Clock::now() + kRetireWait;
  for (;;) {
    bool open = false;
    {
      std::lock_guard<std::mutex> lock(mpi_mutex());
      for (MPI_Request& r : requests_) {
        if (r == MPI_REQUEST_NULL) continue;
        int flag = 0;
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        if (!flag && r != MPI_REQUEST_NULL) open = true;
      }
    }
    if (!open) return;
    if (Clock::now() >= give_up) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::lock_guard<std::mutex> lock(mpi_mutex());
  for (MPI_Request& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  comm_->staging.abandon();
}

}  // namespace dlrt::mpi
